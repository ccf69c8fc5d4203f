/**
 * The websocket source (rules-and-sinks.md §11.6): `DATASOURCE` is the endpoint path. Without
 * `addr` it is a server endpoint on the data server and takes every text/binary frame any client
 * sends; with `addr` it is a client of that server. Each frame is one message for the decoder.
 * Websocket frames cannot be paused: they wait in a `bufferLength` queue while the bus refuses,
 * and a frame arriving at a full queue is dropped and counted.
 */
import type { DataServer, WsHub } from "../http/server.ts";
import type { NetGuard } from "../../net/guard.ts";
import { PropReader, type Props } from "../../config/props.ts";
import { parseWsConf, WsClient, type WsConf } from "./client.ts";
import { SourceMessage } from "../../source/message.ts";
import { DEFAULT_PUSH_BUFFER, PushQueue } from "../../source/push-queue.ts";
import type { SourceConnector, SourceContext } from "../../source/connector.ts";

const enc = new TextEncoder();

export class WebSocketSource implements SourceConnector {
  readonly conf: WsConf;
  private readonly bufferLength: number;
  private queue: PushQueue | undefined;
  private client: WsClient | undefined;
  private hub: { hub: WsHub; listener: (f: string | Uint8Array) => void } | undefined;

  constructor(
    props: Props,
    private readonly server: DataServer,
    private readonly outbound: NetGuard,
  ) {
    this.conf = parseWsConf(props, ["datasource"]);
    const n = new PropReader(props).int("bufferLength", DEFAULT_PUSH_BUFFER);
    this.bufferLength = n >= 1 ? n : DEFAULT_PUSH_BUFFER;
  }

  async open(ctx: SourceContext): Promise<void> {
    const queue = (this.queue = new PushQueue(ctx.bus, this.bufferLength));
    const path = this.conf.path;
    const listener = (f: string | Uint8Array): void => {
      if (!queue.offer(new SourceMessage(typeof f === "string" ? enc.encode(f) : f, null, null))) ctx.exception(`websocket source ${path} drop message: buffer full`);
    };
    if (this.conf.addr) {
      this.client = new WsClient(this.conf, ctx.status, listener, this.outbound, (l, lv) => ctx.log(l, lv));
      await this.client.start();
      return;
    }
    const hub = this.server.acquireWs(path);
    hub.listeners.add(listener);
    this.hub = { hub, listener };
    ctx.status.connected();
  }

  close(): void {
    this.queue?.close();
    this.client?.close();
    const h = this.hub;
    if (h) {
      this.hub = undefined;
      h.hub.listeners.delete(h.listener);
      this.server.releaseWs(this.conf.path, h.hub);
    }
  }
}
