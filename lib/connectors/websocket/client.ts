/**
 * WebSocket connection props shared by the websocket source and sink (rules-and-sinks.md §11.6)
 * and the client mode's connection: with `addr` a client of `<scheme>://<addr><path>` (sending
 * `requestHeader`) through the outbound client's private-network guard, reconnecting with backoff;
 * without it a server endpoint on the data server.
 */
import { EngineError, errorText, IoError } from "../../errors.ts";
import { refusalOf, type NetGuard } from "../../net/guard.ts";
import { openWebSocket } from "../../net/websocket.ts";
import type { ConnectionReporter } from "../../core/connection.ts";
import { PropReader, type Props } from "../../config/props.ts";
import { connectFailureLine } from "../../net/connect-failure.ts";
import type { Level } from "../../log.ts";

export interface WsConf {
  readonly path: string;
  /** `host:port` of the server to connect to; "" for server mode. */
  readonly addr: string;
  readonly scheme: "ws" | "wss";
  readonly headers: Record<string, string>;
}

export function parseWsConf(props: Props, pathKeys: readonly string[]): WsConf {
  const r = new PropReader(props);
  let path = "";
  for (const k of pathKeys) if ((path = r.str(k))) break;
  if (!path.startsWith("/")) throw new EngineError("websocket endpoint should start with /");
  const scheme = (r.str("scheme", "ws") || "ws").toLowerCase();
  if (scheme !== "ws" && scheme !== "wss") throw new EngineError(`websocket scheme ${scheme} is not supported, must be ws or wss`);
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(r.obj("requestHeader") ?? {})) headers[k] = typeof v === "string" ? v : JSON.stringify(v);
  return { path, addr: r.str("addr"), scheme, headers };
}

const MAX_BACKOFF_MS = 10_000;

/**
 * A client connection that reports its state and reconnects until closed. Every connection is
 * checked by the guard; `start` refuses a loopback/private `addr` before anything is sent.
 */
export class WsClient {
  private ws: WebSocket | undefined;
  private closed = false;
  private backoff = 100;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private firstOpen!: () => void;
  /** Resolves at the first successful connection. */
  readonly ready = new Promise<void>((r) => (this.firstOpen = r));

  constructor(
    private readonly conf: WsConf,
    private readonly status: ConnectionReporter,
    private readonly onFrame: ((frame: string | Uint8Array) => void) | null,
    private readonly guard: NetGuard,
    /** The rule's log, for the failed attempts of a connection. */
    private readonly log: (line: string, level?: Level) => void = () => {},
  ) {}

  /**
   * Refuses a loopback/private address (`ip <ip> is in internal network`) or an invalid one, then
   * connects in the background (a name that does not resolve yet is retried there).
   */
  async start(): Promise<void> {
    const refused = await refusalOf(this.url, this.guard);
    if (refused) throw refused;
    void this.connect();
  }

  get url(): string {
    return `${this.conf.scheme}://${this.conf.addr}${this.conf.path}`;
  }

  get open(): boolean {
    return this.ws?.readyState === WebSocket.OPEN;
  }

  /** Bytes queued by the socket, not yet sent. */
  get buffered(): number {
    return this.ws?.bufferedAmount ?? 0;
  }

  private async connect(): Promise<void> {
    if (this.closed) return;
    this.status.connecting();
    let ws: WebSocket;
    try {
      ws = await openWebSocket(this.url, { headers: this.conf.headers }, this.guard);
    } catch (e) {
      // Refused (the name resolves to a private address now) or unresolvable: retried like a drop.
      this.retry(errorText(e));
      return;
    }
    if (this.closed) {
      ws.close(1000);
      return;
    }
    ws.binaryType = "arraybuffer";
    this.ws = ws;
    let failure = "";
    ws.onopen = () => {
      this.backoff = 100;
      this.status.connected();
      this.firstOpen();
    };
    ws.onmessage = (ev: MessageEvent) => {
      const d: unknown = ev.data;
      if (typeof d === "string" || d instanceof Uint8Array) this.onFrame?.(d);
      else if (d instanceof ArrayBuffer) this.onFrame?.(new Uint8Array(d));
    };
    ws.onerror = (ev: Event) => {
      failure = (ev as ErrorEvent).message || "websocket error";
    };
    ws.onclose = (ev: CloseEvent) => {
      if (this.ws !== ws) return;
      this.ws = undefined;
      if (this.closed) return;
      this.retry(failure || `websocket closed: ${ev.code}${ev.reason ? " " + ev.reason : ""}`);
    };
  }

  private retry(reason: string): void {
    // Logged when it changes, not at every retry.
    if (reason !== this.status.lastMessage) this.log(connectFailureLine(this.url, reason, this.backoff), "warn");
    this.status.disconnected(reason);
    this.timer = setTimeout(() => void this.connect(), this.backoff);
    this.backoff = Math.min(this.backoff * 2, MAX_BACKOFF_MS);
  }

  /** Sends one frame; an IO error while not connected (retried by the sink's cache). */
  send(payload: string | Uint8Array): void {
    const ws = this.ws;
    if (!ws || ws.readyState !== WebSocket.OPEN) throw new IoError(`websocket client ${this.url} is not connected`);
    ws.send(payload);
  }

  close(): void {
    this.closed = true;
    clearTimeout(this.timer);
    const ws = this.ws;
    this.ws = undefined;
    ws?.close(1000);
  }
}
