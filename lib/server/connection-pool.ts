/**
 * Named connections as live clients (rest-api.md §12): every `connections.mqtt.<id>` is
 * connected in the background (reconnecting with backoff) so `GET /connections` can report
 * `connected` / `connecting` / `disconnected` and the last error. Other types are stored only.
 */
import { errorText } from "../errors.ts";
import { MqttConnection } from "../io/mqtt/client.ts";
import { parseMqttConf } from "../io/mqtt/conf.ts";

interface Live {
  readonly conn: MqttConnection;
  err: string;
}

const STATUS: Record<number, string> = { 1: "connected", 0: "connecting", [-1]: "disconnected" };

export class ConnectionPool {
  private readonly live = new Map<string, Live>();

  constructor(
    private readonly base: string,
    private readonly log: (line: string) => void,
  ) {}

  /** Opens (or re-opens) connection `id`; props are validated by the caller. */
  open(id: string, typ: string, props: Record<string, unknown>): void {
    void this.close(id);
    if (typ !== "mqtt") return;
    try {
      const entry: Live = { conn: undefined as unknown as MqttConnection, err: "" };
      const conf = parseMqttConf(props, { base: this.base, defaultClientId: `floe-conn-${id}` });
      (entry as { conn: MqttConnection }).conn = new MqttConnection({
        conf,
        log: (line) => {
          entry.err = line.replace(/^mqtt \S+: /, "");
          this.log(`connection ${id}: ${line}`);
        },
      });
      this.live.set(id, entry);
    } catch (e) {
      this.log(`connection ${id}: ${errorText(e)}`);
    }
  }

  async close(id: string): Promise<void> {
    const l = this.live.get(id);
    if (!l) return;
    this.live.delete(id);
    await l.conn.close();
  }

  /** `status` and `err` of a live connection (both omitted when unknown). */
  state(id: string): { status?: string; err?: string } {
    const l = this.live.get(id);
    if (!l) return {};
    const status = STATUS[l.conn.status.status];
    return l.conn.status.status === 1 || !l.err ? { status } : { status, err: l.err };
  }

  /** For `kuiper_conn_status_gauge`: id → 1 / 0 / −1. */
  gauges(): [string, number][] {
    return [...this.live].map(([id, l]) => [id, l.conn.status.status]);
  }

  async closeAll(): Promise<void> {
    await Promise.all([...this.live.keys()].map((id) => this.close(id)));
  }
}
