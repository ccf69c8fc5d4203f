/** gorilla/handlers CORS as eKuiper configures it (rest-api.md §1.3); preflights are never routed. */
const ALLOWED_METHODS = new Set(["POST", "GET", "PUT", "DELETE", "HEAD"]);
const ALLOWED_HEADERS = new Set(["Accept", "Accept-Language", "Content-Type", "Content-Language", "Origin", "Authorization"]);
const SIMPLE = new Set(["Accept", "Accept-Language", "Content-Language", "Origin"]);

/** Go `http.CanonicalHeaderKey`. */
function canonical(h: string): string {
  return h.toLowerCase().replace(/(^|-)([a-z])/g, (_m, d: string, c: string) => d + c.toUpperCase());
}

/** The answer to an OPTIONS request (always handled here), or undefined for other methods. */
export function preflight(req: Request): Response | undefined {
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
  const headers: Record<string, string> = { "Access-Control-Allow-Origin": "*" };
  if (requested.length) headers["Access-Control-Allow-Headers"] = requested.join(",");
  if (method !== "GET" && method !== "HEAD" && method !== "POST") headers["Access-Control-Allow-Methods"] = method;
  return new Response(null, { status: 200, headers });
}

/** Adds `Access-Control-Allow-Origin: *` to a routed response when the request had an Origin. */
export function withOrigin(req: Request, res: Response): Response {
  if (req.headers.has("Origin")) res.headers.set("Access-Control-Allow-Origin", "*");
  return res;
}
