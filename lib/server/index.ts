/**
 * The REST server: the route table in eKuiper's registration order (rest-api.md §2), compiled once,
 * and the request pipeline around it (CORS, JWT, body limit, audit log).
 */
import { join } from "node:path";
import { EngineError, ErrCode } from "../errors.ts";
import { DEFINITION_TOO_DEEP, textTooDeep } from "../value/json-depth.ts";
import { checkToken } from "./auth.ts";
import { preflight, withOrigin } from "./cors.ts";
import { connectionRoutes } from "./connections.ts";
import { asyncRoutes, dataRoutes, dataV2Routes } from "./data.ts";
import type { Engine } from "./engine.ts";
import { metadataRoutes } from "./metadata.ts";
import { metricsDumpRoutes, metricsResponse } from "./metrics.ts";
import { nativePluginRoutes, portablePluginRoutes, prebuildRoutes, serviceRoutes } from "./plugins.ts";
import { schemaRoutes } from "./schemas.ts";
import { traceRoutes } from "./trace.ts";
import { errorBody, fromError } from "./respond.ts";
import { Router, type Ctx, type RouteDef } from "./router.ts";
import { ruleRoutes } from "./rules.ts";
import { rulesetRoutes } from "./ruleset.ts";
import { ruletestRoutes } from "./ruletest.ts";
import { streamRoutes, tableRoutes } from "./streams.ts";
import { batchRoutes, configRoutes, systemRoutes } from "./system.ts";
import { udfRoutes } from "./udf.ts";
import { clusterRoutes } from "./cluster.ts";
import { uploadRoutes } from "./uploads.ts";

export { Engine, type EngineOptions, type RuntimeHooks } from "./engine.ts";

/** Every route, in eKuiper's registration order; `/metrics` when it shares the REST port. */
export function routeTable(withMetrics: boolean): RouteDef<Engine>[] {
  const metrics: RouteDef<Engine>[] = withMetrics
    ? ["GET", "POST", "PUT", "DELETE", "PATCH", "HEAD"].map((method) => ({ method, path: "/metrics", handler: (_c: Ctx, e: Engine) => metricsResponse(e) }))
    : [];
  return [
    ...systemRoutes,
    ...streamRoutes,
    ...tableRoutes,
    ...ruleRoutes,
    ...rulesetRoutes,
    ...configRoutes,
    ...uploadRoutes,
    ...dataRoutes,
    ...connectionRoutes,
    ...ruletestRoutes,
    ...dataV2Routes,
    ...asyncRoutes,
    ...traceRoutes,
    ...metricsDumpRoutes,
    ...batchRoutes,
    ...metadataRoutes,
    ...prebuildRoutes,
    ...nativePluginRoutes,
    ...portablePluginRoutes,
    ...schemaRoutes,
    ...serviceRoutes,
    ...udfRoutes,
    ...clusterRoutes,
    ...metrics,
  ];
}

class BodyTooLarge extends Error {}

async function readLimited(req: Request, max: number): Promise<string> {
  const len = Number(req.headers.get("Content-Length") ?? "");
  if (Number.isFinite(len) && len > max) throw new BodyTooLarge();
  if (!req.body) return "";
  const chunks: Uint8Array[] = [];
  let total = 0;
  for await (const c of req.body as unknown as AsyncIterable<Uint8Array>) {
    total += c.byteLength;
    if (total > max) throw new BodyTooLarge();
    chunks.push(c);
  }
  return checkDepth(new TextDecoder().decode(Buffer.concat(chunks)));
}

/**
 * A JSON body nesting deeper than the payload limit is refused before any handler walks it:
 * every definition is stored so that it can be read back (encoders and masks recurse).
 */
function checkDepth(text: string): string {
  const c = /^\s*([[{])/.exec(text.length > 64 ? text.slice(0, 64) : text);
  if (c && textTooDeep(text)) throw new EngineError(DEFINITION_TOO_DEEP, ErrCode.undefined);
  return text;
}

/**
 * Definitions (rules, streams, tables, confKeys, connections, UDFs) are small: their bodies are
 * refused past 256 KiB before being read, so an 8 MB rule costs no decoding at all, and one at
 * the limit holds the loop for tens of ms at most (bench/limits.ts). Uploads, imports and
 * batches keep `basic.maxBodySize` (README "Errors, limits and the safe start").
 */
export const MAX_DEFINITION_BODY = 256 * 1024;
const DEFINITION_ROUTE = /^\/(?:v2\/)?(?:rules|streams|tables|metadata|udf|connections)(?:\/|$)/;

export interface HandlerOptions {
  /** The CLI listener (eKuiper's RPC port): no JWT, like eKuiper's RPC server. */
  readonly noAuth?: boolean;
}

/** Builds the request handler once; the returned closure runs the prebuilt table. */
export function createHandler(engine: Engine, opts: HandlerOptions = {}): (req: Request) => Promise<Response> {
  const basic = engine.config.basic;
  const router = new Router<Engine>(routeTable(basic.prometheus && basic.prometheusPort === basic.restPort));
  const auth = basic.authentication && !opts.noAuth;
  const mgmt = engine.paths.etc ? join(engine.paths.etc, "mgmt") : "/etc/kuiper/mgmt";
  const max = basic.maxBodySize;
  // The web console (console/index.ts, imported on its first request) on the REST listener only.
  const consoleOn = basic.console && !opts.noAuth;
  const handle = async (req: Request): Promise<Response> => {
    const pre = preflight(req);
    if (pre) return pre;
    const url = new URL(req.url);
    let path: string;
    try {
      path = decodeURIComponent(url.pathname);
    } catch {
      return errorBody(ErrCode.undefined, `invalid URL escape in ${url.pathname}`);
    }
    if (consoleOn && (path === "/ui" || path.startsWith("/ui/"))) {
      const ui = await import("./console/index.ts");
      if (auth && !ui.isConsoleAsset(path)) {
        const bad = checkToken(req.headers.get("Authorization"), mgmt);
        if (bad !== undefined) return withOrigin(req, new Response(bad + "\n", { status: 401, headers: { "Content-Type": "text/plain; charset=utf-8", "X-Content-Type-Options": "nosniff" } }));
      }
      return withOrigin(req, ui.consoleResponse(engine, path, req));
    }
    const m = router.match(req.method, path);
    if (m.kind !== "route") return withOrigin(req, await router.dispatch({ method: req.method, path, query: url.searchParams, headers: req.headers, request: req, text: async () => "", dispatch: handle }, engine));
    if (auth && path !== "/" && path !== "/ping") {
      const bad = checkToken(req.headers.get("Authorization"), mgmt);
      if (bad !== undefined) return withOrigin(req, new Response(bad + "\n", { status: 401, headers: { "Content-Type": "text/plain; charset=utf-8", "X-Content-Type-Options": "nosniff" } }));
    }
    if (basic.enableRestAuditLog) engine.log(`visit ${req.method} ${url.pathname}${url.search}`);
    const limit = DEFINITION_ROUTE.test(path) ? Math.min(max, MAX_DEFINITION_BODY) : max;
    let body: Promise<string> | undefined;
    const ctx: Ctx = {
      method: req.method,
      path,
      params: m.params,
      query: url.searchParams,
      headers: req.headers,
      request: req,
      text: () => (body ??= readLimited(req, limit)),
      dispatch: handle,
    };
    // A caller's trace context: the request is a server span of its trace (rest-api.md §1.5).
    const span = engine.traces.requestSpan(url.pathname, req.headers.get("traceparent"));
    try {
      // In a group: see what other members wrote before this call, and reply once what it wrote is stored in the group.
      const group = engine.cluster?.definitions;
      if (!group) return withOrigin(req, await m.handler(ctx, engine));
      await group.caughtUp();
      const res = await m.handler(ctx, engine);
      await group.flush();
      return withOrigin(req, res);
    } catch (e) {
      if (e instanceof BodyTooLarge) return withOrigin(req, errorBody(ErrCode.undefined, `http: request body too large (limit ${limit} bytes)`, 413));
      engine.log(`${req.method} ${path}: ${(e as Error).stack ?? e}`);
      return withOrigin(req, fromError(e));
    } finally {
      if (span) engine.traces.endRequestSpan(span);
    }
  };
  return handle;
}
