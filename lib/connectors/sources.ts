/**
 * Source connectors by stream TYPE and their property resolution (rules-and-sinks.md §8): the
 * yaml `default` confKey, then `CONF_KEY`, then a `connectionSelector`'s connection, then
 * `EXTRA`, then the stream options injected (`format`, `datasource`, …).
 */
import type { Level } from "../log.ts";
import { loadSourceYaml } from "../config/connectors.ts";
import { EngineError, ErrCode } from "../errors.ts";
import type { StreamDef } from "../plan/streams.ts";
import type { ConnectionRegistry } from "./connections.ts";
import type { MemoryPubSub } from "./memory/pubsub.ts";
import type { ReaderKind } from "./mqtt/client.ts";
import { mergeProps, PropReader } from "../config/props.ts";
import type { DataServer } from "./http/server.ts";
import type { NetGuard } from "../net/guard.ts";
import type { SourceConnector } from "../source/connector.ts";

/** Byte sources get a decoder node (`<i>_decoder`); tuple sources do not. */
const TUPLE_SOURCES = new Set(["memory", "simulator", "httppull", "stdin", "sql"]);

/**
 * The connector type of a stream or table. Without TYPE: `fallback` when the host gives one (pipe mode's
 * stdin), else eKuiper's defaults — `mqtt` for a stream, `file` for a table (sql §3.4).
 */
export function sourceType(def: StreamDef, fallback?: string): string {
  return (def.options.TYPE ?? "").toLowerCase() || fallback || (def.kind === "table" ? "file" : "mqtt");
}

export function isByteSource(type: string): boolean {
  return !TUPLE_SOURCES.has(type);
}

/** Sources that pull every `interval`; on the others (push sources) `interval` is a rate limit (rules-and-sinks.md §8.1). */
const PULL_SOURCES = new Set(["httppull", "simulator", "sql", "file"]);

/**
 * The rate limit of a push source from its resolved props: the `interval` in ms, or undefined
 * when none is set (0 or less) or the source pulls.
 */
export function rateLimitOf(type: string, props: Record<string, unknown>): number | undefined {
  if (PULL_SOURCES.has(type)) return undefined;
  const r = new PropReader(props);
  const ms = r.duration("interval", 0);
  if (!(ms > 0)) return undefined;
  if (ms < 1) throw new EngineError("interval should be larger than 1ms", ErrCode.general);
  // eKuiper's frame mergers are plugins floe does not have: refused rather than silently not merging.
  if (r.str("merger") || r.str("mergeField")) throw new EngineError("the rate limit's merger and mergeField are not supported by floe", ErrCode.general);
  return ms;
}

export interface SourcePropEnv {
  readonly etcDir: string | undefined;
  readonly vars: Readonly<Record<string, string | undefined>>;
  confKey?(kind: "sources" | "connections", type: string, key: string): Record<string, unknown> | undefined;
  /** Named connections of any type by id: a selector naming one of another type is refused by type. */
  readonly connections?: { resolve: ((id: string) => { readonly typ: string } | undefined) | undefined };
  log(line: string, level?: Level): void;
}

/** `connection <id> not existed`, or `connection <id> should be <type> connection` when it has another type. */
export function selectorError(sel: string, type: string, env: Pick<SourcePropEnv, "connections">): EngineError {
  const other = env.connections?.resolve?.(sel);
  return new EngineError(other ? `connection ${sel} should be ${type} connection` : `connection ${sel} not existed`, ErrCode.io);
}

/**
 * The yaml confKeys of each source type, read once per runtime env: like eKuiper, floe reads
 * `etc/` at startup, and re-reading (and cloning the shipped defaults) at every rule start was
 * churn the daemon's memory kept.
 */
const yamlMemo = new WeakMap<SourcePropEnv, Map<string, Promise<Record<string, unknown> | undefined>>>();

function sourceYaml(env: SourcePropEnv, type: string): Promise<Record<string, unknown> | undefined> {
  let m = yamlMemo.get(env);
  if (!m) yamlMemo.set(env, (m = new Map()));
  let p = m.get(type);
  // Stream TYPEs are lowercased; the yaml file keeps eKuiper's spelling (`sources/redisSub.yaml`).
  if (!p) m.set(type, (p = loadSourceYaml(env.etcDir, type === "redissub" ? "redisSub" : type, env.vars)));
  return p;
}

export async function resolveSourceProps(def: StreamDef, type: string, env: SourcePropEnv): Promise<Record<string, unknown>> {
  const yaml = (await sourceYaml(env, type)) ?? {};
  const asProps = (v: unknown) => (v && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined);
  let props = mergeProps(asProps(yaml.default), env.confKey?.("sources", type, "default"));
  const ck = def.options.CONF_KEY;
  if (ck) {
    const fromYaml = asProps(yaml[ck.toLowerCase()]) ?? asProps(yaml[ck]);
    const fromKv = env.confKey?.("sources", type, ck.toLowerCase()) ?? env.confKey?.("sources", type, ck);
    if (!fromYaml && !fromKv) env.log(`conf key ${ck} of stream ${def.name} is not found, using the default`);
    props = mergeProps(props, fromYaml, fromKv);
  }
  const sel = new PropReader(props).str("connectionSelector");
  if (sel) {
    const conn = env.confKey?.("connections", type, sel);
    if (!conn) throw selectorError(sel, type, env);
    props = mergeProps(props, conn);
  }
  const o = def.options;
  if (o.EXTRA) {
    try {
      props = mergeProps(props, JSON.parse(o.EXTRA) as Record<string, unknown>);
    } catch (e) {
      throw new EngineError(`invalid EXTRA ${o.EXTRA}: ${(e as Error).message}`, ErrCode.streamTable);
    }
  }
  const inject: Record<string, unknown> = { format: (o.FORMAT ?? "json").toLowerCase() };
  if (o.KEY !== undefined) inject.key = o.KEY;
  if (o.DATASOURCE !== undefined) inject.datasource = o.DATASOURCE;
  if (o.SCHEMAID !== undefined) inject.schemaId = o.SCHEMAID;
  if (o.DELIMITER !== undefined) inject.delimiter = o.DELIMITER;
  if (o.RETAIN_SIZE !== undefined) inject.retainSize = o.RETAIN_SIZE;
  if (o.STRICT_VALIDATION !== undefined) inject.strictValidation = o.STRICT_VALIDATION;
  if (o.TIMESTAMP !== undefined) inject.timestamp = o.TIMESTAMP;
  if (o.TIMESTAMP_FORMAT !== undefined) inject.timestampFormat = o.TIMESTAMP_FORMAT;
  // A file table reads each file (json) or each read batch (csv) as one record, as eKuiper's does.
  if (def.kind === "table" && type === "file") inject.isTable = true;
  return mergeProps(props, inject);
}

export interface SourceConnectorEnv {
  readonly pubsub: MemoryPubSub;
  readonly connections: ConnectionRegistry;
  readonly baseDir: string;
  readonly mqttReader: ReaderKind | undefined;
  /** The owner's outbound client (`basic.enablePrivateNet`) for httppull and websocket clients. */
  readonly outbound: NetGuard;
  /** httppush and websocket server endpoints. */
  readonly dataServer: DataServer;
}

type SourceFactory = (props: Record<string, unknown>, env: SourceConnectorEnv) => SourceConnector;

/**
 * The connectors by type. Each connector's module (and the client library behind it: mqtt, redis,
 * sql drivers) loads with the first stream of its type, so that pipe mode and an idle daemon do
 * not carry the ones they never use (start-up time and memory).
 */
const SOURCES: Readonly<Record<string, SourceFactory>> = {
  mqtt: (props, env) => {
    const { MqttSource } = require("./mqtt/source.ts") as typeof import("./mqtt/source.ts");
    return new MqttSource(props, { base: env.baseDir, reader: env.mqttReader, connections: env.connections });
  },
  nats: (props, env) => {
    const { NatsSource } = require("./nats/source.ts") as typeof import("./nats/source.ts");
    return new NatsSource(props, { base: env.baseDir, connections: env.connections });
  },
  memory: (props, env) => {
    const { MemorySource } = require("./memory/source.ts") as typeof import("./memory/source.ts");
    return new MemorySource(props, env.pubsub);
  },
  file: (props, env) => {
    const { FileSource } = require("./file/source.ts") as typeof import("./file/source.ts");
    return new FileSource(props, env);
  },
  simulator: (props) => {
    const { SimulatorSource } = require("./simulator/source.ts") as typeof import("./simulator/source.ts");
    return new SimulatorSource(props);
  },
  httppull: (props, env) => {
    const { HttpPullSource } = require("./http/pull-source.ts") as typeof import("./http/pull-source.ts");
    return new HttpPullSource(props, env);
  },
  httppush: (props, env) => {
    const { HttpPushSource } = require("./http/push-source.ts") as typeof import("./http/push-source.ts");
    return new HttpPushSource(props, env.dataServer);
  },
  websocket: (props, env) => {
    const { WebSocketSource } = require("./websocket/source.ts") as typeof import("./websocket/source.ts");
    return new WebSocketSource(props, env.dataServer, env.outbound);
  },
  redissub: (props) => {
    const { RedisSubSource } = require("./redis/source.ts") as typeof import("./redis/source.ts");
    return new RedisSubSource(props);
  },
  sql: (props) => {
    const { SqlSource } = require("./sql/source.ts") as typeof import("./sql/source.ts");
    return new SqlSource(props);
  },
};

/** Every source connector type (stream TYPEs, lowercased). */
export const SOURCE_TYPES: readonly string[] = Object.keys(SOURCES);

/** A connector of `type`; `source <type> is not defined` for any other. */
export function createSourceConnector(type: string, props: Record<string, unknown>, env: SourceConnectorEnv): SourceConnector {
  if (!Object.hasOwn(SOURCES, type)) throw new EngineError(`source ${type} is not defined`, ErrCode.streamTable);
  return SOURCES[type]!(props, env);
}
