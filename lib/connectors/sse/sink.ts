/**
 * The sse sink (rules-and-sinks.md §11.7): an endpoint (`endpoint`, a path) on the data server;
 * each payload is one event `data: <payload>\n\n` to every connected client. Sinks naming the
 * same endpoint share it. Without clients a payload is gone (as in eKuiper).
 */
import { EngineError } from "../../errors.ts";
import type { DataServer, SseHub } from "../http/server.ts";
import { PropReader, type Props } from "../../config/props.ts";
import type { SinkConnector, SinkContext, SinkItem } from "../../sink/connector.ts";

const dec = new TextDecoder();

export class SseSink implements SinkConnector {
  readonly bytes = true;
  readonly endpoint: string;
  private hub: SseHub | undefined;

  constructor(
    props: Props,
    private readonly server: DataServer | undefined,
  ) {
    this.endpoint = new PropReader(props).str("endpoint");
    if (!this.endpoint.startsWith("/")) throw new EngineError("sse endpoint should start with /");
  }

  open(ctx: SinkContext): void {
    if (!this.server) throw new EngineError("sse sink: no data server");
    this.hub = this.server.acquireSse(this.endpoint);
    ctx.status.connected();
  }

  send(item: SinkItem): void {
    const p = item.payload;
    this.hub!.publish(typeof p === "string" ? p : dec.decode(p as Uint8Array));
  }

  close(): void {
    const h = this.hub;
    this.hub = undefined;
    if (h) this.server!.releaseSse(this.endpoint, h);
  }
}
