/**
 * The REST server: the route table in eKuiper's registration order (rest-api.md §2), compiled once,
 * and the request pipeline around it (origin policy and CORS, JWT, body limit, audit log).
 */
import { join } from "node:path";
import { ErrCode } from "../errors.ts";
import { OriginPolicy } from "../net/origin-policy.ts";
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
import { BodyTooLarge, bodyLimit, boundedRequest, declaredTooLarge, readBody } from "./request-body.ts";
import { Router, type Ctx, type Match, type RouteDef } from "./router.ts";
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

export interface HandlerOptions {
  /** The CLI listener (eKuiper's RPC port): no JWT, like eKuiper's RPC server. */
  readonly noAuth?: boolean;
}

const unauthorized = (text: string) => new Response(text + "\n", { status: 401, headers: { "Content-Type": "text/plain; charset=utf-8", "X-Content-Type-Options": "nosniff" } });

/**
 * Builds the request handler once; the returned closure runs the prebuilt table. Every request
 * passes the origin policy first, decided by the route it asks for (a preflight: the route of
 * its `Access-Control-Request-Method`), so a route is guarded unless marked open.
 */
export function createHandler(engine: Engine, opts: HandlerOptions = {}): (req: Request) => Promise<Response> {
  const basic = engine.config.basic;
  const router = new Router<Engine>(routeTable(basic.prometheus && basic.prometheusPort === basic.restPort));
  const auth = basic.authentication && !opts.noAuth;
  const mgmt = engine.paths.etc ? join(engine.paths.etc, "mgmt") : "/etc/kuiper/mgmt";
  const policy = new OriginPolicy({ allowedOrigins: basic.allowedOrigins, allowedHosts: basic.allowedHosts, scheme: basic.restTls && !opts.noAuth ? "https" : "http", bindHosts: [basic.restIp, basic.ip] });
  // The web console (console/index.ts, imported on its first request) on the REST listener only.
  const consoleOn = basic.console && !opts.noAuth;
  let ui: { routes: Router<Engine>; withPageHeaders: (res: Response) => Response } | undefined;
  const handle = async (req: Request): Promise<Response> => {
    const url = new URL(req.url);
    let path: string;
    try {
      path = decodeURIComponent(url.pathname);
    } catch {
      return errorBody(ErrCode.undefined, `invalid URL escape in ${url.pathname}`);
    }
    const page = consoleOn && (path === "/ui" || path.startsWith("/ui/"));
    if (page && !ui) {
      const c = await import("./console/index.ts");
      ui = { routes: new Router<Engine>(c.consoleRoutes), withPageHeaders: c.withPageHeaders };
    }
    const table = page ? ui!.routes : router;
    const isPreflight = req.method === "OPTIONS";
    const m = table.match(isPreflight ? (req.headers.get("Access-Control-Request-Method") ?? "") : req.method, path);
    const open = m.kind === "route" && m.open;
    const admission = policy.admit(req, open);
    if (admission.refused) return admission.refused;
    const allow = admission.allowOrigin;
    if (isPreflight) return preflight(req, allow)!;
    const res = await route(req, url, path, table, m, open);
    return withOrigin(req, page ? ui!.withPageHeaders(res) : res, allow);
  };
  const route = async (req: Request, url: URL, path: string, table: Router<Engine>, m: Match<Engine>, open: boolean): Promise<Response> => {
    if (m.kind !== "route") return table.dispatch({ method: req.method, path, query: url.searchParams, headers: req.headers, request: req, text: async () => "", dispatch: handle }, engine);
    if (auth && !open) {
      const bad = checkToken(req.headers.get("Authorization"), mgmt);
      if (bad !== undefined) return unauthorized(bad);
    }
    if (basic.enableRestAuditLog) engine.log(`visit ${req.method} ${url.pathname}${url.search}`);
    const limit = bodyLimit(path, basic.maxBodySize);
    if (declaredTooLarge(req, limit)) return tooLarge(limit);
    // A caller's trace context: the request is a server span of its trace (rest-api.md §1.5).
    const span = engine.traces.requestSpan(url.pathname, req.headers.get("traceparent"));
    try {
      const request = await boundedRequest(req, limit);
      let body: Promise<string> | undefined;
      const ctx: Ctx = {
        method: req.method,
        path,
        params: m.params,
        query: url.searchParams,
        headers: req.headers,
        request,
        text: () => (body ??= readBody(request, limit)),
        dispatch: handle,
      };
      // In a group: see what other members wrote before this call, and reply once what it wrote is stored in the group.
      const group = engine.cluster?.definitions;
      if (!group) return await m.handler(ctx, engine);
      await group.caughtUp();
      const res = await m.handler(ctx, engine);
      await group.flush();
      return res;
    } catch (e) {
      if (e instanceof BodyTooLarge) return tooLarge(limit);
      engine.log(`${req.method} ${path}: ${(e as Error).stack ?? e}`);
      return fromError(e);
    } finally {
      if (span) engine.traces.endRequestSpan(span);
    }
  };
  return handle;
}

const tooLarge = (limit: number) => errorBody(ErrCode.undefined, `http: request body too large (limit ${limit} bytes)`, 413);
