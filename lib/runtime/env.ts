/**
 * What the streaming runtime needs from its host (the daemon or pipe mode): directories,
 * configuration defaults, the process-wide memory pub/sub and shared-stream hub, logging.
 */
import type { Level } from "../log.ts";
import { createFunctionRegistry, type FunctionRegistry } from "../functions/index.ts";
import type { Zone } from "../value/time.ts";
import { localZone } from "../value/time.ts";
import { ConnectionRegistry } from "../connectors/connections.ts";
import { CONNECTORS } from "../connectors/index.ts";
import { DataServer } from "../connectors/http/server.ts";
import { MemoryPubSub } from "../connectors/memory/pubsub.ts";
import type { ReaderKind } from "../connectors/mqtt/client.ts";
import { createNetGuard, type NetGuard } from "../net/guard.ts";
import { SHIPPED_CACHE_DEFAULTS, type CacheConf } from "../sink/common.ts";
import type { SpanSink } from "./trace/span.ts";
import { SchemaRegistry } from "../formats/schema-registry.ts";

export interface RuntimeEnv {
  /** etc directory: `mqtt_source.yaml`, `sources/*.yaml` (undefined: shipped defaults). */
  readonly etcDir: string | undefined;
  /** data directory: the sink cache `cache.db`. */
  readonly dataDir: string;
  /** Base for relative connector paths (TLS files). */
  readonly baseDir: string;
  /** Environment for `MQTT_SOURCE__…` overrides. */
  readonly vars: Readonly<Record<string, string | undefined>>;
  readonly zone: Zone;
  readonly ignoreCase: boolean;
  /** kuiper.yaml `rule:` section. */
  readonly ruleDefaults: Readonly<Record<string, unknown>>;
  /** kuiper.yaml `sink:` section, decoded. */
  readonly cacheDefaults: CacheConf;
  /** base64 `basic.aesKey`. */
  readonly aesKey: string | undefined;
  /**
   * The owner's outbound client: httppull, lookups, the REST sink and websocket clients reach
   * loopback/private addresses only with `basic.enablePrivateNet` (default: guarded, getaddrinfo).
   */
  readonly outbound: NetGuard;
  /**
   * Shared streams answer their rules' simple WHEREs through a predicate index (runtime/predicate-index.ts);
   * `FLOE_PREDICATE_INDEX=off` makes every rule evaluate every message (bench/density.ts compares both).
   */
  readonly predicateIndex: boolean;
  /** MQTT source read path (bench/tests); default lean. */
  readonly mqttReader: ReaderKind | undefined;
  /** How long a stopping sink may take to drain (gracefulShutdownTimeout), ms. */
  readonly sinkGraceMs: number;
  readonly pubsub: MemoryPubSub;
  /** Named connections shared by the nodes that select them (one client per connection per process). */
  readonly connections: ConnectionRegistry;
  /** The data server (httppush, websocket and SSE endpoints), listening while something uses it. */
  readonly dataServer: DataServer;
  /** KV confKeys (`sources.<type>.<key>`, `sinks.…`, `connections.…`) that override yaml ones. */
  confKey?(kind: "sources" | "sinks" | "connections", type: string, key: string): Record<string, unknown> | undefined;
  /** A log line (never stdout), info unless `level` says otherwise. */
  log(line: string, level?: Level): void;
  /** A source of stream `stream` is receiving (connected and subscribed, or again after a reconnect). */
  sourceReady?(stream: string, text: string): void;
  /** The functions rules parse, plan and call with: the built-ins and the owner's UDFs. */
  readonly functions: FunctionRegistry;
  /** Where traced rules send finished spans (the daemon's trace hub); undefined: tracing records nothing. */
  readonly traces?: SpanSink;
  /** The registered schemas (`FORMAT="protobuf"` + `SCHEMAID`, sink `schemaId`): the daemon's, or an empty one. */
  readonly schemas: SchemaRegistry;
}

export function createRuntimeEnv(p: Partial<RuntimeEnv> = {}): RuntimeEnv {
  const log = p.log ?? ((l: string) => void process.stderr.write(l + "\n"));
  return {
    etcDir: p.etcDir,
    dataDir: p.dataDir ?? "data",
    baseDir: p.baseDir ?? process.cwd(),
    vars: p.vars ?? process.env,
    zone: p.zone ?? localZone(),
    ignoreCase: p.ignoreCase ?? false,
    ruleDefaults: p.ruleDefaults ?? {},
    cacheDefaults: p.cacheDefaults ?? SHIPPED_CACHE_DEFAULTS,
    aesKey: p.aesKey,
    outbound: p.outbound ?? createNetGuard(),
    predicateIndex: p.predicateIndex ?? (p.vars ?? process.env).FLOE_PREDICATE_INDEX !== "off",
    mqttReader: p.mqttReader,
    sinkGraceMs: p.sinkGraceMs ?? 3000,
    pubsub: p.pubsub ?? new MemoryPubSub(),
    connections: p.connections ?? new ConnectionRegistry(p.baseDir ?? process.cwd(), log, p.mqttReader, CONNECTORS),
    dataServer: p.dataServer ?? new DataServer({ hostname: "127.0.0.1", port: 10081 }),
    confKey: p.confKey,
    log,
    sourceReady: p.sourceReady,
    functions: p.functions ?? createFunctionRegistry(),
    traces: p.traces,
    schemas: p.schemas ?? new SchemaRegistry(),
  };
}
