/**
 * The websocket sink (rules-and-sinks.md §11.6): `path` (or `datasource`). Without `addr` it is a
 * server endpoint on the data server and broadcasts each payload as one frame to every connected
 * client (none connected: the payload is gone, as in eKuiper); with `addr` it is a client of that
 * server, failing with an IO error while disconnected (so the cache and retry engage).
 */
import { EngineError } from "../../errors.ts";
import type { DataServer, WsHub } from "../http/server.ts";
import type { NetGuard } from "../../net/guard.ts";
import type { Props } from "../../config/props.ts";
import { parseWsConf, WsClient, type WsConf } from "./client.ts";
import type { SinkConnector, SinkContext, SinkItem } from "../../sink/connector.ts";

/** A client waits for its socket to drain past this many queued bytes (real backpressure). */
const HIGH_WATER = 1 << 20;

export class WebSocketSink implements SinkConnector {
  readonly bytes = true;
  readonly conf: WsConf;
  private client: WsClient | undefined;
  private hub: WsHub | undefined;

  constructor(
    props: Props,
    private readonly server: DataServer | undefined,
    private readonly outbound: NetGuard,
  ) {
    this.conf = parseWsConf(props, ["path", "datasource"]);
  }

  async open(ctx: SinkContext): Promise<void> {
    if (this.conf.addr) {
      this.client = new WsClient(this.conf, ctx.status, null, this.outbound, (l, lv) => ctx.log(l, lv));
      await this.client.start();
      return this.client.ready;
    }
    if (!this.server) throw new EngineError("websocket sink: no data server");
    this.hub = this.server.acquireWs(this.conf.path);
    ctx.status.connected();
  }

  send(item: SinkItem): Promise<void> | void {
    const p = item.payload as string | Uint8Array;
    if (this.hub) {
      this.hub.broadcast(p);
      return;
    }
    const c = this.client!;
    c.send(p);
    if (c.buffered > HIGH_WATER) return this.drained(c);
  }

  private async drained(c: WsClient): Promise<void> {
    while (c.open && c.buffered > HIGH_WATER) await Bun.sleep(1);
  }

  close(): void {
    this.client?.close();
    const h = this.hub;
    this.hub = undefined;
    if (h) this.server!.releaseWs(this.conf.path, h);
  }
}
