/**
 * Extension routes floe cannot honour (rest-api.md §14.1–§14.3): Go native plugins, portable
 * plugins and external services (schemas: schemas.ts). Lists answer empty so UIs degrade
 * gracefully; installs answer an eKuiper-shaped 400 that says floe does not support them.
 */
import { ErrCode } from "../errors.ts";
import { field, isObject, readJson } from "./body.ts";
import type { Engine } from "./engine.ts";
import { errorBody, json, sentence } from "./respond.ts";
import { idChecked, type RouteDef } from "./router.ts";

type R = RouteDef<Engine>;
const NATIVE = "native plugins are not supported by floe";
const PORTABLE = "portable plugins are not supported by floe";
const SERVICES = "external services are not supported by floe";

const notFound = (m: string) => errorBody(ErrCode.notFound, m);
const unsupported = (m: string) => errorBody(ErrCode.undefined, m);

function nativeRoutes(type: "sources" | "sinks" | "functions"): R[] {
  const routes: R[] = [
    { method: "GET", path: `/plugins/${type}`, handler: () => json([]) },
    {
      method: "POST",
      path: `/plugins/${type}`,
      handler: async (ctx) => {
        const b = await readJson(ctx);
        if (!b.ok) return unsupported(`Invalid body: Error decoding the ${type} plugin json: ${b.error}`);
        return unsupported(`${type} plugins create command error: ${NATIVE}`);
      },
    },
    { method: "DELETE", path: `/plugins/${type}/{name}`, handler: idChecked("name", (ctx) => unsupported(`delete ${type} plugin ${ctx.params.name} error: not found`)) },
    { method: "GET", path: `/plugins/${type}/{name}`, handler: idChecked("name", (ctx) => notFound(`describe ${type} plugin ${ctx.params.name} error: not found`)) },
    { method: "PUT", path: `/plugins/${type}/{name}`, handler: idChecked("name", (ctx) => unsupported(`${type} plugins update command error: ${NATIVE} (${ctx.params.name})`)) },
  ];
  if (type === "functions")
    routes.push({ method: "POST", path: "/plugins/functions/{name}/register", handler: (ctx) => notFound(`register functions plugin ${ctx.params.name} error: not found`) });
  return routes;
}

export const prebuildRoutes: R[] = (["sources", "sinks", "functions"] as const).map((t) => ({
  method: "GET",
  path: `/plugins/${t}/prebuild`,
  handler: () => (process.platform === "linux" ? json({}) : unsupported("It's strongly recommended to install plugins at linux. If you choose to proceed to install plugin, please make sure the plugin is already validated in your own build.")),
}));

export const nativePluginRoutes: R[] = [
  ...nativeRoutes("sources"),
  ...nativeRoutes("sinks"),
  ...nativeRoutes("functions"),
  {
    method: "GET",
    path: "/plugins/udfs",
    handler: (_c, e) => json([...e.scripts.keys()].sort().map((n) => ({ name: n, plugin: "javascript" }))),
  },
  {
    method: "GET",
    path: "/plugins/udfs/{name}",
    handler: idChecked("name", (ctx, e) => (e.scripts.has(ctx.params.name!) ? json({ name: ctx.params.name, plugin: "javascript" }) : notFound(`describe function ${ctx.params.name} error: not found`))),
  },
];

export const portablePluginRoutes: R[] = [
  { method: "GET", path: "/plugins/portables", handler: () => json([]) },
  {
    method: "POST",
    path: "/plugins/portables",
    handler: async (ctx) => {
      const b = await readJson(ctx);
      if (!b.ok) return unsupported(`Invalid body: Error decoding the portable plugin json: ${b.error}`);
      return unsupported(`portable plugin create command error: ${PORTABLE}`);
    },
  },
  { method: "GET", path: "/plugins/portables/{name}", handler: idChecked("name", (ctx) => notFound(`describe portable plugin ${ctx.params.name} error: not found`)) },
  { method: "DELETE", path: "/plugins/portables/{name}", handler: idChecked("name", (ctx) => unsupported(`delete portable plugin ${ctx.params.name} error: not found`)) },
  { method: "PUT", path: "/plugins/portables/{name}", handler: idChecked("name", () => unsupported(`portable plugin update command error: ${PORTABLE}`)) },
  { method: "GET", path: "/plugins/portables/{name}/status", handler: (ctx) => notFound(`portable plugin ${ctx.params.name} not found: not found`) },
];

export const serviceRoutes: R[] = [
  { method: "GET", path: "/services", handler: () => json([]) },
  {
    method: "POST",
    path: "/services",
    handler: async (ctx) => {
      const b = await readJson(ctx);
      if (!b.ok) return unsupported(`Invalid body: Error decoding the service json: ${b.error}`);
      return unsupported(`service create command error: ${SERVICES}`);
    },
  },
  { method: "GET", path: "/services/functions", handler: () => json([]) },
  { method: "GET", path: "/services/functions/{name}", handler: (ctx) => notFound(`describe function ${ctx.params.name} error: not found`) },
  { method: "DELETE", path: "/services/{name}", handler: idChecked("name", (ctx) => unsupported(`delete service ${ctx.params.name} error: not found`)) },
  { method: "GET", path: "/services/{name}", handler: idChecked("name", (ctx) => notFound(`describe service ${ctx.params.name} error: not found`)) },
  { method: "PUT", path: "/services/{name}", handler: idChecked("name", () => unsupported(`service update command error: ${SERVICES}`)) },
];

