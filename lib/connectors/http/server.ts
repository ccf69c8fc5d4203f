/**
 * The data server (config-and-cli.md §2.4): one HTTP listener on `source.httpServerIp:httpServerPort`
 * shared by httppush endpoints, websocket and SSE server endpoints and trial-run SSE. It listens
 * while something is registered on it and stops when the last registration leaves (so pipe mode
 * and tests exit cleanly); port 0 asks for a free port (`port` tells which one was taken).
 */
import type { Server, ServerWebSocket } from "bun";
import { EngineError, ErrCode } from "../../errors.ts";
import { OriginPolicy, type OriginSettings } from "../../net/origin-policy.ts";

export interface DataServerOptions {
  readonly hostname: string;
  readonly port: number;
  /** `source.httpServerTls`: serve HTTPS. */
  readonly tls?: { readonly certfile: string; readonly keyfile: string };
  /** The REST API's CORS wrapper (rules-and-sinks.md §11.4), injected by the daemon. */
  readonly cors?: {
    preflight(req: Request): Response | undefined;
    withOrigin(req: Request, res: Response): Response;
  };
  readonly maxRequestBodySize?: number;
  /** Bytes of events one SSE client may have waiting (`basic.sseClientMaxBytes`; SSE_CLIENT_MAX_BYTES). */
  readonly sseClientMaxBytes?: number;
  /** `basic.allowedOrigins`/`allowedHosts`: who may open a websocket endpoint (none listed: same origin and non-browser clients). */
  readonly origins?: OriginSettings;
}

export type DataHandler = (req: Request) => Response | Promise<Response>;

interface WsData {
  readonly hub: WsHub;
}

const enc = new TextEncoder();
const TEXT = { "Content-Type": "text/plain; charset=utf-8" };

/**
 * A websocket server endpoint: the connected clients (a sink broadcasts to them) and the
 * listeners (sources) that receive every frame any client sends.
 */
export class WsHub {
  readonly clients = new Set<ServerWebSocket<WsData>>();
  readonly listeners = new Set<(frame: string | Uint8Array) => void>();
  /** Called when a client connects (sink connection status). */
  readonly onClients = new Set<(n: number) => void>();
  refs = 0;

  /** Sends one frame to every connected client; the number of clients that took it. */
  broadcast(payload: string | Uint8Array): number {
    let n = 0;
    for (const c of this.clients) if (c.send(payload) !== 0) n++;
    return n;
  }

  closeAll(): void {
    for (const c of this.clients) c.close(1001, "endpoint closed");
    this.clients.clear();
  }
}

/** Bytes of events one SSE client may have waiting before further events to it are dropped (counted). */
export const SSE_CLIENT_MAX_BYTES = 8 * 1024 * 1024;

/**
 * An SSE endpoint (an `sse` sink, a trial run's `/test/<id>`): every published payload is one
 * event `data: <payload>\n\n` to every client. What waits for a client is bounded in bytes: each
 * client's stream queues by byte length up to `maxBytes`, and an event that does not fit is not
 * queued for that client (counted in `dropped`) — a client that stops reading cannot grow memory.
 */
export class SseHub {
  private readonly clients = new Set<ReadableStreamDefaultController<Uint8Array>>();
  refs = 0;
  /** Events not queued for a client whose queue was full. */
  dropped = 0;

  constructor(readonly maxBytes = SSE_CLIENT_MAX_BYTES) {}

  get size(): number {
    return this.clients.size;
  }

  publish(payload: string): void {
    const chunk = enc.encode(`data: ${payload}\n\n`);
    for (const c of this.clients) {
      // desiredSize: maxBytes less what the client's queue holds (the strategy sizes chunks by bytes).
      if ((c.desiredSize ?? 0) < chunk.byteLength) {
        this.dropped++;
        continue;
      }
      try {
        c.enqueue(chunk);
      } catch {
        this.clients.delete(c);
      }
    }
  }

  respond(): Response {
    const clients = this.clients;
    let ctl: ReadableStreamDefaultController<Uint8Array>;
    const stream = new ReadableStream<Uint8Array>({
      start(c) {
        ctl = c;
        clients.add(c);
        // eKuiper flushes the headers at once; Bun sends them with the first chunk, so the
        // stream opens with an SSE comment line, which clients ignore.
        c.enqueue(enc.encode(":\n\n"));
      },
      cancel() {
        clients.delete(ctl);
      },
    }, new ByteLengthQueuingStrategy({ highWaterMark: this.maxBytes }));
    return new Response(stream, { headers: { "Content-Type": "text/event-stream", "Cache-Control": "no-cache", Connection: "keep-alive", "Access-Control-Allow-Origin": "*" } });
  }

  closeAll(): void {
    for (const c of this.clients) {
      try {
        c.close();
      } catch {
        // already closed by the client
      }
    }
    this.clients.clear();
  }
}

/** Go's `r.URL.Path`: routes match the decoded path. */
function decodePath(p: string): string {
  try {
    return decodeURIComponent(p);
  } catch {
    return p;
  }
}

export class DataServer {
  private server: Server<WsData> | undefined;
  /** path → method → handler. */
  private readonly routes = new Map<string, Map<string, DataHandler>>();
  private readonly ws = new Map<string, WsHub>();
  private readonly sse = new Map<string, SseHub>();
  private readonly policy: OriginPolicy;

  constructor(readonly opts: DataServerOptions) {
    const { allowedOrigins = [], allowedHosts = [] } = opts.origins ?? {};
    this.policy = new OriginPolicy({ allowedOrigins, allowedHosts, scheme: opts.tls ? "https" : "http", bindHosts: [opts.hostname] });
  }

  /** The port listened on (the configured one while not listening). */
  get port(): number {
    return this.server?.port ?? this.opts.port;
  }

  get listening(): boolean {
    return this.server !== undefined;
  }

  /** Serves `handler` for `method path` (`*`: any method); returns the unregister function. */
  route(method: string, path: string, handler: DataHandler): () => void {
    let m = this.routes.get(path);
    if (m?.has(method)) throw new EngineError(`data server endpoint ${method} ${path} is already registered`, ErrCode.io);
    this.start();
    if (!m) this.routes.set(path, (m = new Map()));
    m.set(method, handler);
    return () => {
      if (m.get(method) !== handler) return;
      m.delete(method);
      if (m.size === 0) this.routes.delete(path);
      this.idle();
    };
  }

  /** The websocket endpoint at `path`, shared by the sources and sinks using it (ref-counted). */
  acquireWs(path: string): WsHub {
    this.start();
    let h = this.ws.get(path);
    if (!h) this.ws.set(path, (h = new WsHub()));
    h.refs++;
    return h;
  }

  releaseWs(path: string, hub: WsHub): void {
    if (this.ws.get(path) !== hub || --hub.refs > 0) return;
    this.ws.delete(path);
    hub.closeAll();
    this.idle();
  }

  /** The SSE endpoint at `path` (any method), shared by the sinks using it (ref-counted). */
  /** Every SSE endpoint by path (`/metrics`: the events each dropped for clients that stopped reading). */
  sseHubs(): IterableIterator<[string, SseHub]> {
    return this.sse.entries();
  }

  acquireSse(path: string): SseHub {
    this.start();
    let h = this.sse.get(path);
    if (!h) this.sse.set(path, (h = new SseHub(this.opts.sseClientMaxBytes)));
    h.refs++;
    return h;
  }

  releaseSse(path: string, hub: SseHub): void {
    if (this.sse.get(path) !== hub || --hub.refs > 0) return;
    this.sse.delete(path);
    hub.closeAll();
    this.idle();
  }

  /** Starts listening (idempotent); a bind failure is an IO error. */
  start(): void {
    if (this.server) return;
    const o = this.opts;
    try {
      this.server = Bun.serve<WsData>({
        hostname: o.hostname,
        port: o.port,
        idleTimeout: 0,
        maxRequestBodySize: o.maxRequestBodySize ?? 10 * 1024 * 1024,
        tls: o.tls ? { cert: Bun.file(o.tls.certfile), key: Bun.file(o.tls.keyfile) } : undefined,
        fetch: (req, server) => this.handle(req, server),
        websocket: {
          open(ws) {
            ws.data.hub.clients.add(ws);
            for (const f of ws.data.hub.onClients) f(ws.data.hub.clients.size);
          },
          message(ws, msg) {
            const frame = typeof msg === "string" ? msg : new Uint8Array(msg);
            for (const l of ws.data.hub.listeners) l(frame);
          },
          close(ws) {
            ws.data.hub.clients.delete(ws);
            for (const f of ws.data.hub.onClients) f(ws.data.hub.clients.size);
          },
        },
      });
    } catch (e) {
      throw new EngineError(`listen tcp ${o.hostname}:${o.port}: ${(e as Error).message}`, ErrCode.io, { cause: e });
    }
  }

  private handle(req: Request, server: Server<WsData>): Response | Promise<Response> | undefined {
    const cors = this.opts.cors;
    const pre = cors?.preflight(req);
    if (pre) return pre;
    const path = decodePath(new URL(req.url).pathname);
    const hub = this.ws.get(path);
    if (hub && req.headers.get("upgrade")?.toLowerCase() === "websocket") {
      // eKuiper's upgrader accepts any origin; a browser does not apply its same-origin rule to
      // websockets, so any page the user opens could read a sink's rows or write into a source.
      const admission = this.policy.admit(req, false);
      if (admission.refused) return admission.refused;
      if (server.upgrade(req, { data: { hub } })) return undefined;
      return new Response("Bad Request\n", { status: 400, headers: TEXT });
    }
    const sse = this.sse.get(path);
    if (sse) return sse.respond();
    const m = this.routes.get(path);
    if (!m) return new Response("404 page not found\n", { status: 404, headers: TEXT });
    const h = m.get(req.method) ?? m.get("*");
    // gorilla/mux: a known path with another method is 405 with an empty body.
    if (!h) return new Response(null, { status: 405 });
    if (!cors) return h(req);
    const res = h(req);
    return res instanceof Promise ? res.then((r) => cors.withOrigin(req, r)) : cors.withOrigin(req, res);
  }

  /** Nothing registered: stop listening, letting responses in flight (closing SSE streams) finish. */
  private idle(): void {
    if (this.routes.size > 0 || this.ws.size > 0 || this.sse.size > 0) return;
    void this.server?.stop(false);
    this.server = undefined;
  }

  /** Stops listening and closes every endpoint's clients. */
  close(): void {
    for (const h of this.ws.values()) h.closeAll();
    for (const h of this.sse.values()) h.closeAll();
    this.ws.clear();
    this.sse.clear();
    this.routes.clear();
    this.server?.stop(true);
    this.server = undefined;
  }
}
