/**
 * Named connections (rules-and-sinks.md §9, rest-api.md §12): one live client per named
 * connection per process, shared by every source and sink node that selects it with
 * `connectionSelector`, and reference-counted by those nodes. The daemon opens every stored
 * connection at startup and on `POST /connections` (they live until deleted); pipe mode opens one
 * lazily from `etc/connections/connection.yaml` when a node first selects it and closes it with
 * its last user. The connection types are the connector specs' (`connections` role): those whose
 * role opens a live client (mqtt, nats) have one; the other types are stored only.
 */
import type { Level } from "../log.ts";
import type { ConnectionReporter } from "../core/connection.ts";
import { EngineError, ErrCode, errorText } from "../errors.ts";
import type { Doc } from "../config/env.ts";
import type { ReaderKind } from "./mqtt/client.ts";
import type { SharedMqtt } from "./mqtt/shared.ts";
import type { NatsLink } from "./nats/connection.ts";

/** A live client of a named connection. */
export interface LiveConnection {
  readonly status: ConnectionReporter;
  close(): Promise<void>;
}

export interface LiveConnectionEnv {
  readonly base: string;
  readonly reader: ReaderKind | undefined;
  /** A line of the connection's log (prefixed with `connection <id>: `). */
  log(line: string, level?: Level): void;
  /** Sets the error text the connection's state shows. */
  setErr(text: string): void;
}

/** A named connection type of a connector spec (declared here, below the specs that use it). */
export interface ConnectionRole {
  /** `listed` by `/metadata/connections` (the default), or `unlisted` (floe's own: answered by name only). */
  readonly metadata?: "listed" | "unlisted";
  /** The properties and defaults `/metadata/connections/<type>` shows. */
  readonly props?: Doc;
  /** Why `props` are refused by `POST`/`PUT /connections`, or undefined. */
  readonly validate?: (props: Record<string, unknown>) => string | undefined;
  /** Opens the live client, connecting in the background (throws on bad props); types without one are stored only. */
  readonly open?: (id: string, props: Record<string, unknown>, env: LiveConnectionEnv) => LiveConnection;
}

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
    readonly client: LiveConnection | undefined,
    /** Opened on demand (pipe mode): closed when the last node leaves. */
    readonly lazy: boolean,
  ) {}
}

const STATUS: Record<number, string> = { 1: "connected", 0: "connecting", [-1]: "disconnected" };

export class ConnectionRegistry {
  private readonly live = new Map<string, Entry>();
  private readonly roles = new Map<string, ConnectionRole>();
  /** Where a connection not opened yet is looked up (confKeys, connection.yaml). */
  resolve: ((id: string) => ConnectionSpec | undefined) | undefined;

  /** `specs`: the connector specs (connectors/index.ts `CONNECTORS`) whose connection types open live clients. */
  constructor(
    private readonly base: string,
    private readonly log: (line: string, level?: Level) => void,
    private readonly reader: ReaderKind | undefined,
    specs: readonly { readonly connections?: Readonly<Record<string, ConnectionRole>> }[],
  ) {
    for (const s of specs) for (const [typ, role] of Object.entries(s.connections ?? {})) this.roles.set(typ, role);
  }

  /** Opens (or re-opens) connection `id`, connecting in the background; props are validated by the caller. */
  open(id: string, typ: string, props: Record<string, unknown>): void {
    void this.close(id);
    this.create(id, typ, props, false);
  }

  private create(id: string, typ: string, props: Record<string, unknown>, lazy: boolean): Entry | undefined {
    const open = this.roles.get(typ)?.open;
    let client: LiveConnection | undefined;
    let entry: Entry | undefined;
    if (open) {
      try {
        client = open(id, props, {
          base: this.base,
          reader: this.reader,
          log: (line, level) => this.log(`connection ${id}: ${line}`, level),
          setErr: (text) => {
            if (entry) entry.err = text;
          },
        });
      } catch (e) {
        this.log(`connection ${id}: ${errorText(e)}`);
        return undefined;
      }
    }
    entry = new Entry(id, typ, client, lazy);
    this.live.set(id, entry);
    return entry;
  }

  async close(id: string): Promise<void> {
    const e = this.live.get(id);
    if (!e) return;
    this.live.delete(id);
    await e.client?.close();
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
    if (e.typ !== "mqtt" || !e.client) throw new EngineError(`connection ${id} should be mqtt connection`, ErrCode.io);
    e.refs.push(ref);
    // The mqtt connection role opens a SharedMqtt (mqtt/spec.ts).
    return e.client as SharedMqtt;
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
    if (e.typ !== "nats" || !e.client) throw new EngineError(`connection ${id} should be nats connection`, ErrCode.io);
    e.refs.push(ref);
    // The nats connection role opens a NatsLink (nats/spec.ts).
    return e.client as NatsLink;
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
    const rep = e?.client?.status;
    if (!e || !rep) return {};
    const s = rep.status;
    return s === 1 || !e.err ? { status: STATUS[s] } : { status: STATUS[s], err: e.err };
  }

  /** For `kuiper_conn_status_gauge`: id → 1 / 0 / −1. */
  gauges(): [string, number][] {
    const out: [string, number][] = [];
    for (const [id, e] of this.live) {
      const rep = e.client?.status;
      if (rep) out.push([id, rep.status]);
    }
    return out;
  }

  async closeAll(): Promise<void> {
    await Promise.all([...this.live.keys()].map((id) => this.close(id)));
  }
}
