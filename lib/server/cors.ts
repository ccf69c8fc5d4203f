/**
 * gorilla/handlers CORS as eKuiper configures it (rest-api.md §1.3); preflights are never routed.
 * eKuiper allows every origin; floe sends the `Access-Control-Allow-Origin` the origin policy
 * (net/origin-policy.ts) admitted, `*` where nothing sensitive is served (the data server's
 * httppush and SSE endpoints, open routes).
 */
const ALLOWED_METHODS = new Set(["POST", "GET", "PUT", "DELETE", "HEAD"]);
const ALLOWED_HEADERS = new Set(["Accept", "Accept-Language", "Content-Type", "Content-Language", "Origin", "Authorization"]);
const SIMPLE = new Set(["Accept", "Accept-Language", "Content-Language", "Origin"]);

/** Go `http.CanonicalHeaderKey`. */
function canonical(h: string): string {
  return h.toLowerCase().replace(/(^|-)([a-z])/g, (_m, d: string, c: string) => d + c.toUpperCase());
}

/** The answer to an OPTIONS request the policy admitted, or undefined for other methods; `allow`: the origin to allow. */
export function preflight(req: Request, allow: string | undefined): Response | undefined {
  if (req.method !== "OPTIONS") return undefined;
  if (!req.headers.has("Origin")) return new Response(null, { status: 200 });
  const method = req.headers.get("Access-Control-Request-Method");
  if (!method) return new Response(null, { status: 400 });
  if (!ALLOWED_METHODS.has(method)) return new Response(null, { status: 405 });
  const requested: string[] = [];
  for (const raw of (req.headers.get("Access-Control-Request-Headers") ?? "").split(",")) {
    const h = canonical(raw.trim());
    if (h === "" || SIMPLE.has(h)) continue;
    if (!ALLOWED_HEADERS.has(h)) return new Response(null, { status: 403 });
    requested.push(h);
  }
  const headers: Record<string, string> = {};
  if (allow !== undefined) headers["Access-Control-Allow-Origin"] = allow;
  if (allow !== "*") headers.Vary = "Origin";
  if (requested.length) headers["Access-Control-Allow-Headers"] = requested.join(",");
  if (method !== "GET" && method !== "HEAD" && method !== "POST") headers["Access-Control-Allow-Methods"] = method;
  return new Response(null, { status: 200, headers });
}

/** Adds `Access-Control-Allow-Origin: <allow>` to a routed response when the request had an Origin. */
export function withOrigin(req: Request, res: Response, allow: string | undefined): Response {
  if (allow === undefined || !req.headers.has("Origin")) return res;
  res.headers.set("Access-Control-Allow-Origin", allow);
  if (allow !== "*") res.headers.append("Vary", "Origin");
  return res;
}

/** eKuiper's CORS for the data server's httppush and SSE endpoints, where data, not definitions, is served. */
export const anyOriginCors = {
  preflight: (req: Request) => preflight(req, "*"),
  withOrigin: (req: Request, res: Response) => withOrigin(req, res, "*"),
};
