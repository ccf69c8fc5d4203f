/**
 * Named connections (rules-and-sinks.md §9, rest-api.md §12): one live client per named
 * connection per process, shared by every source and sink node that selects it with
 * `connectionSelector`, and reference-counted by those nodes. The daemon opens every stored
 * connection at startup and on `POST /connections` (they live until deleted); pipe mode opens one
 * lazily from `etc/connections/connection.yaml` when a node first selects it and closes it with
 * its last user. `mqtt` and `nats` connections have a live client; other types are stored only.
 */
import type { Level } from "../log.ts";
import { EngineError, ErrCode, errorText } from "../errors.ts";
import { parseMqttConf } from "./mqtt/conf.ts";
import type { ReaderKind } from "./mqtt/client.ts";
import type { SharedMqtt } from "./mqtt/shared.ts";
import type { NatsLink } from "./nats/connection.ts";

export interface ConnectionSpec {
  readonly typ: string;
  readonly props: Record<string, unknown>;
}

class Entry {
  /** Node references: `<ruleId>_<node>_<instance>`, one per attached node. */
  readonly refs: string[] = [];
  err = "";
  constructor(
    readonly id: string,
    readonly typ: string,
    readonly mqtt: SharedMqtt | undefined,
    readonly nats: NatsLink | undefined,
    /** Opened on demand (pipe mode): closed when the last node leaves. */
    readonly lazy: boolean,
  ) {}
}

const STATUS: Record<number, string> = { 1: "connected", 0: "connecting", [-1]: "disconnected" };

export class ConnectionRegistry {
  private readonly live = new Map<string, Entry>();
  /** Where a connection not opened yet is looked up (confKeys, connection.yaml). */
  resolve: ((id: string) => ConnectionSpec | undefined) | undefined;

  constructor(
    private readonly base: string,
    private readonly log: (line: string, level?: Level) => void,
    private readonly reader?: ReaderKind,
  ) {}

  /** Opens (or re-opens) connection `id`, connecting in the background; props are validated by the caller. */
  open(id: string, typ: string, props: Record<string, unknown>): void {
    void this.close(id);
    this.create(id, typ, props, false);
  }

  private create(id: string, typ: string, props: Record<string, unknown>, lazy: boolean): Entry | undefined {
    let mqtt: SharedMqtt | undefined;
    let nats: NatsLink | undefined;
    let entry: Entry | undefined;
    if (typ === "nats") {
      try {
        // The NATS client loads with the first NATS connection, not with the daemon (memory).
        const { parseNatsConf } = require("./nats/conf.ts") as typeof import("./nats/conf.ts");
        const { NatsLink } = require("./nats/connection.ts") as typeof import("./nats/connection.ts");
        const conf = parseNatsConf(props, { base: this.base, name: `floe-conn-${id}` });
        nats = new NatsLink(conf, (line, level) => {
          // A failed attempt's line carries more than the state shows: the state keeps the client's text.
          if (entry && level !== "debug") entry.err = (level === "warn" && nats ? nats.status.lastMessage : line).replace(/^nats \S+: /, "");
          this.log(`connection ${id}: ${line}`, level);
        });
      } catch (e) {
        this.log(`connection ${id}: ${errorText(e)}`);
        return undefined;
      }
    }
    if (typ === "mqtt") {
      try {
        const conf = parseMqttConf(props, { base: this.base, defaultClientId: `floe-conn-${id}` });
        // The MQTT client loads with the first MQTT connection, not with the daemon (memory).
        const { SharedMqtt } = require("./mqtt/shared.ts") as typeof import("./mqtt/shared.ts");
        mqtt = new SharedMqtt(
          conf,
          (line, level) => {
            // The connection's state shows the client's last error, not the log line around it.
            const err = mqtt?.conn.lastError;
            if (entry && level === "warn" && err) entry.err = err;
            this.log(`connection ${id}: ${line}`, level);
          },
          this.reader,
        );
      } catch (e) {
        this.log(`connection ${id}: ${errorText(e)}`);
        return undefined;
      }
    }
    entry = new Entry(id, typ, mqtt, nats, lazy);
    this.live.set(id, entry);
    return entry;
  }

  async close(id: string): Promise<void> {
    const e = this.live.get(id);
    if (!e) return;
    this.live.delete(id);
    await e.mqtt?.close();
    await e.nats?.close();
  }

  /**
   * Attaches node `ref` to MQTT connection `id`: `connection <id> not existed` when there is no
   * such connection, `connection <id> should be mqtt connection` when it has another type.
   */
  acquireMqtt(id: string, ref: string): SharedMqtt {
    let e = this.live.get(id);
    if (!e) {
      const spec = this.resolve?.(id);
      if (spec) e = this.create(id, spec.typ, spec.props, true);
    }
    if (!e) throw new EngineError(`connection ${id} not existed`, ErrCode.io);
    if (e.typ !== "mqtt" || !e.mqtt) throw new EngineError(`connection ${id} should be mqtt connection`, ErrCode.io);
    e.refs.push(ref);
    return e.mqtt;
  }

  /**
   * Attaches node `ref` to NATS connection `id`: `connection <id> not existed` when there is no
   * such connection, `connection <id> should be nats connection` when it has another type.
   */
  acquireNats(id: string, ref: string): NatsLink {
    let e = this.live.get(id);
    if (!e) {
      const spec = this.resolve?.(id);
      if (spec) e = this.create(id, spec.typ, spec.props, true);
    }
    if (!e) throw new EngineError(`connection ${id} not existed`, ErrCode.io);
    if (e.typ !== "nats" || !e.nats) throw new EngineError(`connection ${id} should be nats connection`, ErrCode.io);
    e.refs.push(ref);
    return e.nats;
  }

  /** Detaches node `ref`; a lazily opened connection closes with its last node. */
  async release(id: string, ref: string): Promise<void> {
    const e = this.live.get(id);
    if (!e) return;
    const i = e.refs.indexOf(ref);
    if (i >= 0) e.refs.splice(i, 1);
    if (e.lazy && e.refs.length === 0) await this.close(id);
  }

  /** The nodes attached to `id` (sorted). */
  refs(id: string): string[] {
    return [...(this.live.get(id)?.refs ?? [])].sort();
  }

  /** `status` and `err` of a live connection (both omitted when unknown). */
  state(id: string): { status?: string; err?: string } {
    const e = this.live.get(id);
    const rep = e?.mqtt?.status ?? e?.nats?.status;
    if (!e || !rep) return {};
    const s = rep.status;
    return s === 1 || !e.err ? { status: STATUS[s] } : { status: STATUS[s], err: e.err };
  }

  /** For `kuiper_conn_status_gauge`: id → 1 / 0 / −1. */
  gauges(): [string, number][] {
    const out: [string, number][] = [];
    for (const [id, e] of this.live) {
      const rep = e.mqtt?.status ?? e.nats?.status;
      if (rep) out.push([id, rep.status]);
    }
    return out;
  }

  async closeAll(): Promise<void> {
    await Promise.all([...this.live.keys()].map((id) => this.close(id)));
  }
}
