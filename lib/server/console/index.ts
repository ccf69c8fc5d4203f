/**
 * The web console at `/ui` (docs/rest.md, "Web console"): the page, its script and style embedded in the
 * executable as files (read on request, nothing parsed at start-up), and `/ui/events`, the SSE
 * stream of the one sampler. Loaded by a dynamic import on the first `/ui` request, so pipe mode
 * and a daemon nobody browses never evaluate it.
 */
import type { Engine } from "../engine.ts";
import type { RouteDef } from "../router.ts";
import { authoringRoutes } from "./authoring.ts";
import { connectionViewRoutes } from "./connections.ts";
import { peekRoutes } from "./peeks.ts";
import { Sampler, type Sample } from "./sampler.ts";
// Built from ui/ by `make ui` into generated/console/ (its stylesheet inside); embedded by `bun build --compile` as a file.
import appJs from "../../../generated/console/app.js" with { type: "file" };

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<title>floe console</title>
<link rel="icon" href="data:,">
</head>
<body>
<header>
  <a class="brand" href="#/">floe</a>
  <nav>
    <a href="#/">Overview</a>
    <a href="#/rules">Rules</a>
    <a href="#/streams">Streams &amp; tables</a>
    <a href="#/trial">Trial run</a>
    <a href="#/config">Connections &amp; confKeys</a>
  </nav>
  <span id="live" class="live" title="live updates">●</span>
</header>
<main id="main"></main>
<script type="module" src="/ui/app.js"></script>
</body>
</html>
`;

const ASSETS: Record<string, { body: () => string | Blob; type: string }> = {
  "/ui": { body: () => PAGE, type: "text/html; charset=utf-8" },
  "/ui/": { body: () => PAGE, type: "text/html; charset=utf-8" },
  "/ui/app.js": { body: () => Bun.file(appJs), type: "text/javascript; charset=utf-8" },
};

/**
 * Sent with every `/ui` response: no page of another site may frame the console (a click on a
 * framed Stop or Delete would be the user's), nothing is content-sniffed, and the page runs
 * scripts from its own origin only (the stylesheet is a `<style>` the script adds). Connections
 * may go to any http(s) address: a trial run's events come from the data server, another port
 * of the host, which CSP cannot name before it listens (nor at all for an IPv6 address).
 */
const PAGE_HEADERS: Record<string, string> = {
  "X-Frame-Options": "DENY",
  "Content-Security-Policy": "default-src 'self'; connect-src 'self' http: https:; img-src 'self' data:; style-src 'self' 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
  "X-Content-Type-Options": "nosniff",
};

/** Adds the console's framing and content-type headers to one of its responses. */
export function withPageHeaders(res: Response): Response {
  for (const [k, v] of Object.entries(PAGE_HEADERS)) res.headers.set(k, v);
  return res;
}

/**
 * The console's routes: the page and its script are open (they must load to ask for a token,
 * and hold nothing of the engine's); the event stream needs the token and the same origin.
 */
export const consoleRoutes: RouteDef<Engine>[] = [
  ...Object.entries(ASSETS).flatMap(([path, a]) =>
    ["GET", "HEAD"].map((method) => ({ method, path, open: true, handler: () => new Response(a.body(), { headers: { "Content-Type": a.type, "Cache-Control": "no-cache" } }) })),
  ),
  { method: "GET", path: "/ui/events", handler: (ctx, e) => events(e, ctx.request) },
  ...authoringRoutes,
  ...connectionViewRoutes,
  ...peekRoutes,
];

const samplers = new WeakMap<Engine, Sampler>();
const enc = new TextEncoder();

/** The engine's sampler, started on first use. */
export function consoleSampler(engine: Engine): Sampler {
  let s = samplers.get(engine);
  if (!s) {
    samplers.set(engine, (s = new Sampler(engine)));
    engine.onClose(() => s!.close());
  }
  return s;
}

/**
 * `GET /ui/events[?rule=<id>]`: the history of totals first (event `history`), then one `sample`
 * event a second; with `rule`, each sample also carries that rule's topology and node metrics.
 */
function events(engine: Engine, req: Request): Response {
  const sampler = consoleSampler(engine);
  const rule = new URL(req.url).searchParams.get("rule") ?? "";
  let off: (() => void) | undefined;
  const stream = new ReadableStream<Uint8Array>({
    start(c) {
      const send = (event: string, data: unknown) => c.enqueue(enc.encode(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`));
      const push = (s: Sample) => {
        try {
          send("sample", rule ? { ...s, rule: sampler.detail(rule) ?? null } : s);
        } catch {
          off?.();
        }
      };
      send("history", sampler.history);
      if (sampler.last) push(sampler.last);
      off = sampler.subscribe(push);
      req.signal.addEventListener("abort", () => {
        off?.();
        try {
          c.close();
        } catch {
          // already closed by the client
        }
      });
    },
    cancel() {
      off?.();
    },
  });
  return new Response(stream, { headers: { "Content-Type": "text/event-stream", "Cache-Control": "no-cache" } });
}
