/**
 * The httppush source (rules-and-sinks.md §11.4): an endpoint (`DATASOURCE`, a path) and method
 * (`POST`/`PUT`) on the data server; each request body is one message, decoded by the rule's
 * decoder. Several streams on the same endpoint and method share it: every request goes to all.
 * Backpressure: a request is answered `ok` only once its message was admitted to the bus; up to
 * `bufferLength` requests per stream wait, beyond that a request is refused with 503 (counted).
 */
import { EngineError } from "../../errors.ts";
import type { DataServer } from "./server.ts";
import { PropReader, type Props } from "../../config/props.ts";
import { SourceMessage } from "../../source/message.ts";
import { DEFAULT_PUSH_BUFFER, PushQueue } from "../../source/push-queue.ts";
import type { SourceConnector, SourceContext } from "../../source/connector.ts";

interface Subscriber {
  readonly queue: PushQueue;
  readonly ctx: SourceContext;
}

/** The streams listening on one `method path` of one data server. */
class Endpoint {
  readonly subs = new Set<Subscriber>();
  unroute: () => void = () => {};
  constructor(
    readonly method: string,
    readonly path: string,
  ) {}

  async handle(req: Request): Promise<Response> {
    const body = new Uint8Array(await req.arrayBuffer());
    // An upstream trace continues in the rules that trace this stream (rest-api.md §15).
    const traceparent = req.headers.get("traceparent");
    const waits: Promise<boolean>[] = [];
    let full = false;
    for (const s of this.subs) {
      const p = s.queue.admit(new SourceMessage(body, null, null, traceparent));
      if (p) waits.push(p);
      else {
        full = true;
        s.ctx.exception(`httppush source endpoint ${this.path} drop message: buffer full`);
      }
    }
    const ok = waits.length === 0 || (await Promise.all(waits)).every((x) => x);
    if (full) return new Response("buffer full\n", { status: 503, headers: { "Retry-After": "1" } });
    if (!ok) return new Response("source closed\n", { status: 503 });
    return new Response("ok");
  }
}

const endpoints = new WeakMap<DataServer, Map<string, Endpoint>>();

export class HttpPushSource implements SourceConnector {
  readonly endpoint: string;
  readonly method: string;
  readonly bufferLength: number;
  private sub: Subscriber | undefined;

  constructor(
    props: Props,
    private readonly server: DataServer,
  ) {
    const r = new PropReader(props);
    this.endpoint = r.str("datasource");
    if (!this.endpoint.startsWith("/")) throw new EngineError("property `endpoint` must start with /");
    this.method = r.str("method", "POST") || "POST";
    if (this.method !== "POST" && this.method !== "PUT") throw new EngineError(`method ${this.method} is not supported, must be POST or PUT`);
    this.bufferLength = r.int("bufferLength", DEFAULT_PUSH_BUFFER);
    if (this.bufferLength < 1) this.bufferLength = DEFAULT_PUSH_BUFFER;
  }

  open(ctx: SourceContext): void {
    let byKey = endpoints.get(this.server);
    if (!byKey) endpoints.set(this.server, (byKey = new Map()));
    const key = `${this.method} ${this.endpoint}`;
    let ep = byKey.get(key);
    if (!ep) {
      const e = new Endpoint(this.method, this.endpoint);
      e.unroute = this.server.route(this.method, this.endpoint, (req) => e.handle(req));
      byKey.set(key, (ep = e));
    }
    this.sub = { queue: new PushQueue(ctx.bus, this.bufferLength), ctx };
    ep.subs.add(this.sub);
    ctx.status.connected();
  }

  close(): void {
    const sub = this.sub;
    if (!sub) return;
    this.sub = undefined;
    sub.queue.close();
    const byKey = endpoints.get(this.server);
    const key = `${this.method} ${this.endpoint}`;
    const ep = byKey?.get(key);
    if (!ep) return;
    ep.subs.delete(sub);
    if (ep.subs.size > 0) return;
    byKey!.delete(key);
    ep.unroute();
  }
}
