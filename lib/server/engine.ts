/**
 * The daemon's composition root: configuration, the KV store, stream catalog, confKeys, rules,
 * JavaScript UDFs, uploads and async tasks, plus the startup sequence of config-and-cli.md §6.3
 * (restore, connection.yaml provisioning, init.json import, patrol) and graceful shutdown.
 */
import type { Level } from "../log.ts";
import type { ByteBudget } from "../core/byte-budget.ts";
import { createHash } from "node:crypto";
import { existsSync, rmSync } from "node:fs";
import { join } from "node:path";
import { setCompileLimits } from "../value/compile-budget.ts";
import { loadKuiperConfig, prepareDataDir, type Doc, type KuiperConfig, type Paths } from "../config/index.ts";
import { loadConnectionYaml } from "../connectors/conf-files.ts";
import { CONNECTORS } from "../connectors/index.ts";
import { errorText } from "../errors.ts";
import type { Logger } from "../log.ts";
import { ConnectionRegistry } from "../connectors/connections.ts";
import { DataServer } from "../connectors/http/server.ts";
import { createNetGuard, type NetGuard } from "../net/guard.ts";
import type { Zone } from "../value/time.ts";
import type { StreamDef } from "../plan/streams.ts";
import { CpuMeter, Trials } from "./rest-state.ts";
import { createFunctionRegistry, type FunctionRegistry } from "../functions/index.ts";
import { registerBrokenScript, registerScript, unregisterScript, type ScriptDef } from "../functions/js-udf.ts";
import { RuleStateName, type HeldRun, type RunExit, type RunFactory } from "./lifecycle.ts";
import { patrol } from "./scheduler.ts";
import { StreamCatalog } from "../store/stream-catalog.ts";
import { Kv } from "../store/kv.ts";
import { SchemaStore } from "../store/schemas.ts";
import { checkFormat, SchemaRegistry, type SchemaEntry } from "../formats/schema-registry.ts";
import type { DefinitionStore } from "../store/definition-store.ts";
import type { ClusterNode } from "../cluster/index.ts";
import { answerGroupRequest, applyGroupChange, checkGroupSnapshot } from "./cluster-apply.ts";
import { staticEntryError } from "./group-entry.ts";
import { clearRuleCache } from "../store/sink-cache.ts";
import { checkpointStore } from "../store/checkpoint.ts";
import type { StoredRule } from "../store/stored-rule.ts";
import { ConfKeys } from "./confkeys.ts";
import { anyOriginCors } from "./cors.ts";
import type { MockSpec } from "../connectors/simulator/source.ts";
import { RuleManager } from "./rule-manager.ts";
import { TraceHub } from "../runtime/trace/hub.ts";
import type { SafeMode } from "./safe-mode.ts";

export interface RuntimeHooks {
  readonly factory: RunFactory;
  readonly validate: (def: StoredRule) => void;
  /** Trial runs: the rule's results go to `publish` instead of its actions. */
  /** Releases what the runtime holds beyond its rules (the daemon's memory lookup tables). */
  readonly close?: () => void;
  /** What the daemon's memory lookup tables hold against their byte budgets (`/metrics`). */
  readonly memoryTables?: () => { topic: string; key: string; budget: ByteBudget }[];
  readonly trial?: (def: StoredRule, publish: (payload: string) => void, mocks?: Readonly<Record<string, MockSpec>>, onExit?: (exit: RunExit) => void) => Promise<HeldRun>;
}

/** What the rule runtime reads from the engine when it plans a rule. */
export interface RuntimeDeps {
  streams(): ReadonlyMap<string, StreamDef>;
  zone(): Zone;
}

export interface EngineOptions {
  readonly paths: Paths;
  readonly env?: Record<string, string | undefined>;
  /** Supplies the rule runtime (server/runtime-bridge.ts). */
  readonly runtime: (deps: RuntimeDeps, engine: Engine) => RuntimeHooks;
  readonly log?: (line: string, level?: Level) => void;
  /** Levelled log of rule state changes and errors (the daemon's; none in tests that build an Engine). */
  readonly logger?: Logger;
  readonly version?: string;
}

/** `source.httpServerTls.certfile`/`keyfile` (both set: the data server speaks HTTPS). */
function dataServerTls(doc: Doc): { certfile: string; keyfile: string } | undefined {
  const src = doc.source;
  const tls = src && typeof src === "object" && !Array.isArray(src) ? (src as Doc).httpservertls : undefined;
  if (!tls || typeof tls !== "object" || Array.isArray(tls)) return undefined;
  const { certfile, keyfile } = tls as Doc;
  return typeof certfile === "string" && certfile && typeof keyfile === "string" && keyfile ? { certfile, keyfile } : undefined;
}

export class Engine {
  readonly startedAt = Date.now();
  /** `PATCH /configs` timezone (not persisted). */
  zoneOverride: Zone | undefined;
  metricsDump = false;
  /** Set by `floe serve`: graceful shutdown then exit with `code` (`/stop`, `/data/import?stop=1`). */
  requestStop: ((code: number) => void) | undefined;
  readonly scripts = new Map<string, ScriptDef>();
  /** Safe mode (safe-mode.ts): set by `floe serve` before `start()`. */
  safeMode: SafeMode = { on: false, reason: "" };
  private patrolTimer: ReturnType<typeof setInterval> | undefined;
  private readonly closers: (() => void)[] = [];
  hooks!: RuntimeHooks;
  /** `POST /ruletest` trial runs. */
  readonly trials = new Trials();
  /** Async `POST /data/import` tasks by id, abortable by `DELETE /data/import/{id}` (server/data.ts). */
  readonly dataTasks = new Map<string, AbortController>();
  /** CPU use between two `GET /` (server/system.ts). */
  readonly cpu = new CpuMeter();
  /** Named connections: one live client each, shared by the rules that select them. */
  readonly connections: ConnectionRegistry;
  /** In a group: the partitions each partitioned rule runs here (server/partitioned-run.ts), for GET /cluster. */
  readonly partitionRuns = new Map<string, { owned(): number[] }>();
  /** httppush/websocket/SSE endpoints and trial-run SSE on `source.httpServerIp:httpServerPort`. */
  readonly dataServer: DataServer;
  /**
   * The daemon's outbound client (`basic.enablePrivateNet`): every connection to a user-supplied
   * address — rules' connectors, the OTLP exporter, `file` URLs of uploads and imports — goes through it.
   */
  readonly outbound: NetGuard;
  /** Rule tracing's local store and OTLP export (rest-api.md §15). */
  readonly traces: TraceHub;
  /** The registered protobuf schemas (`/schemas/protobuf`), read by rules' decoders and encoders. */
  readonly schemas = new SchemaRegistry();
  /** Their files (`<data>/schemas/protobuf/<name>.proto`) and versions. */
  private readonly schemaStore: SchemaStore;

  private constructor(
    readonly paths: Paths,
    readonly config: KuiperConfig,
    readonly env: Record<string, string | undefined>,
    /** Definitions: the sqlite KV, or its group-replicated form when `cluster.nats` is set. */
    readonly kv: DefinitionStore,
    readonly catalog: StreamCatalog,
    /** The built-in functions and this daemon's JavaScript UDFs: what every rule parses, plans and calls with. */
    readonly functions: FunctionRegistry,
    readonly confKeys: ConfKeys,
    readonly rules: RuleManager,
    readonly log: (line: string, level?: Level) => void,
    readonly version: string,
    /** This instance's membership of a floe group (`cluster.nats`); none on a single node. */
    readonly cluster: ClusterNode | undefined,
  ) {
    this.outbound = createNetGuard({ allowPrivate: config.basic.enablePrivateNet });
    this.traces = new TraceHub(config.openTelemetry, this.outbound, log, paths.data);
    this.connections = new ConnectionRegistry(paths.etc ? join(paths.etc, "..") : process.cwd(), log, undefined, CONNECTORS);
    this.schemaStore = new SchemaStore(kv, paths.data, paths.etc);
    // Stored schemas are registered unparsed: one that no longer parses fails the rules using it.
    for (const s of this.schemaStore.load()) this.schemas.set(s);
    catalog.check = (c) => checkFormat(this.schemas, c.options.FORMAT, c.options.SCHEMAID);
    const src = config.source;
    this.dataServer = new DataServer({ hostname: src.httpServerIp, port: src.httpServerPort, tls: dataServerTls(config.doc), cors: anyOriginCors, origins: config.basic, maxRequestBodySize: config.basic.maxBodySize, sseClientMaxBytes: config.basic.sseClientMaxBytes });
    this.connections.resolve = (id) => {
      for (const [full, props] of confKeys.entries()) {
        const [kind, typ, ...rest] = full.split(".");
        if (kind === "connections" && typ && rest.join(".") === id) return { typ, props };
      }
      return undefined;
    };
  }

  get zone(): Zone {
    return this.zoneOverride ?? this.config.basic.timezone;
  }

  get uploadsDir(): string {
    return join(this.paths.data, "uploads");
  }

  /** Opens the store and builds every manager (nothing runs yet). */
  static async open(o: EngineOptions): Promise<Engine> {
    const env = o.env ?? process.env;
    const log = o.log ?? ((l: string) => process.stderr.write(l + "\n"));
    const config = await loadKuiperConfig(o.paths.etc, env);
    // Before anything stored is parsed: the stored rules and schemas are compiled under the same budget.
    setCompileLimits(config.basic.compileLimits);
    prepareDataDir(o.paths.data);
    const local = Kv.open(o.paths.data, config.store.sqliteName);
    let kv: DefinitionStore = local;
    let cluster: ClusterNode | undefined;
    if (config.cluster.nats.length > 0) {
      try {
        // The group layer and the NATS client load only in a group (a single node carries neither).
        const { ClusterNode } = await import("../cluster/node.ts");
        cluster = await ClusterNode.connect(config.cluster, log);
        kv = await cluster.replicate(local, staticEntryError);
      } catch (e) {
        await cluster?.close();
        local.close();
        throw e;
      }
    }
    const functions = createFunctionRegistry();
    const catalog = new StreamCatalog(kv, functions, log);
    const connYaml = await loadConnectionYaml(o.paths.etc, env);
    const confKeys = new ConfKeys(kv, o.paths.etc, env, connYaml);
    await confKeys.load();
    let engine: Engine | undefined;
    const deps: RuntimeDeps = { streams: () => catalog.all(), zone: () => engine?.zone ?? config.basic.timezone };
    let hooks: RuntimeHooks | undefined;
    const factory: RunFactory = (def, onExit) => hooks!.factory(def, onExit);
    const rules = new RuleManager(kv, catalog, functions, () => config.rule, factory, (def) => hooks!.validate(def), () => deps.zone(), log);
    const logger = o.logger;
    if (logger)
      rules.onState = (id, state, message) => {
        if (state === RuleStateName.stoppedByErr) logger.error(`rule ${id} is stopped by error: ${message}`);
        else logger.info(`rule ${id} is ${state}${message ? `: ${message}` : ""}`);
      };
    engine = new Engine(o.paths, config, env, kv, catalog, functions, confKeys, rules, log, o.version ?? "0.0.0", cluster);
    hooks = o.runtime(deps, engine);
    engine.hooks = hooks;
    rules.cleanup = (id) => {
      try {
        if (existsSync(join(o.paths.data, "cache.db"))) clearRuleCache(o.paths.data, id);
        if (existsSync(join(o.paths.data, "checkpoint.db"))) {
          const store = checkpointStore(o.paths.data);
          store.clear(id);
          // The runs of a partitioned rule (server/partitioned-run.ts) keep theirs under `<id>.p<n>`.
          if (cluster) store.clearPrefix(`${id}.p`);
        }
        rmSync(join(o.paths.data, `rule_${id}`), { recursive: true, force: true });
      } catch (e) {
        log(`clean rule ${id} failed: ${errorText(e)}`);
      }
    };
    engine.provisionConnections(connYaml);
    return engine;
  }

  /**
   * Startup, first step: the stored JavaScript UDFs, each loaded into its sandbox under the UDF
   * limits (a script that hangs or allocates at load fails alone). One that fails stays defined
   * (listed, deletable) and its calls are row errors with the reason. In safe mode the scripts are
   * listed but not loaded.
   */
  async loadScripts(): Promise<void> {
    for (const [id, text] of this.kv.entries("script")) {
      let def: ScriptDef;
      try {
        def = JSON.parse(text) as ScriptDef;
      } catch (e) {
        this.log(`cannot restore javascript function ${id}: ${errorText(e)}`);
        continue;
      }
      this.scripts.set(id, def);
      if (this.safeMode.on) continue;
      try {
        await registerScript(this.functions, def, this.config.basic.udfLimits);
      } catch (e) {
        this.log(`cannot restore javascript function ${id}: ${errorText(e)}`);
        registerBrokenScript(this.functions, def, errorText(e));
      }
    }
  }

  /**
   * Startup sequence after `loadScripts`: init.json (`importInit`, transfer.ts, for the data and
   * etc directories), rules, patrol (config-and-cli.md §6.3). In safe mode init.json is not
   * imported, rules are registered but not started, and the patrol (schedules, restart
   * strategies) does not run.
   */
  start(importInit?: (e: Engine, dir: string) => void): void {
    const safe = this.safeMode.on;
    for (const [id, text] of this.kv.entries("asyncTask")) {
      const t = JSON.parse(text) as { status: string };
      if (t.status === "running" || t.status === "register") this.kv.set("asyncTask", id, JSON.stringify({ ...t, status: "cancel" }));
    }
    if (!safe && importInit) for (const dir of [this.paths.data, this.paths.etc]) if (dir) importInit(this, dir);
    for (const [full, props] of this.confKeys.entries()) {
      const [kind, typ, ...id] = full.split(".");
      if (kind === "connections" && typ) this.connections.open(id.join("."), typ, props);
    }
    if (this.cluster?.store) checkGroupSnapshot(this, this.cluster, this.cluster.store);
    this.rules.restore(!safe);
    const cluster = this.cluster;
    if (cluster?.store) {
      const store = cluster.store;
      cluster.definitions.attach((c) => applyGroupChange(this, store, c));
      cluster.rpc.serve((req) => answerGroupRequest(this, req));
    }
    if (safe) return;
    // Scheduled rules restored inside their window start now, not at the first tick.
    this.patrolNow();
    this.patrolTimer = setInterval(() => this.patrolNow(), this.config.basic.rulePatrolIntervalMs);
  }

  patrolNow(now = Date.now()): void {
    patrol(this.rules.rules.values(), now, this.zone, (r) => void r.start());
  }

  /** connection.yaml → KV `connections.<type>.<id>` when its hash changed (config-and-cli.md §4). */
  private provisionConnections(doc: Doc): void {
    const hash = createHash("sha256").update(JSON.stringify(doc)).digest("hex");
    if (this.kv.get("meta", "connectionYamlHash") === hash) return;
    for (const [type, ids] of Object.entries(doc)) {
      if (!ids || typeof ids !== "object") continue;
      for (const [id, props] of Object.entries(ids as Doc)) {
        if (!props || typeof props !== "object") continue;
        const p = { ...(props as Record<string, unknown>) };
        const op = p.xOperation ?? p.xoperation;
        delete p.xOperation;
        delete p.xoperation;
        const key = `connections.${type}.${id}`;
        if (op === undefined || op === "create") this.kv.setnx("confKey", key, JSON.stringify(p));
        else if (op === "delete") this.kv.delete("confKey", key);
        else this.log(`connection ${type}.${id}: unknown xOperation ${String(op)}`);
      }
    }
    this.kv.set("meta", "connectionYamlHash", hash);
  }

  /** Starts a trial run whose results go to `publish` (plan-only runtimes publish nothing). */
  async trialRun(def: StoredRule, publish: (payload: string) => void, onExit: (exit: RunExit) => void, mocks?: Readonly<Record<string, MockSpec>>): Promise<HeldRun> {
    if (this.hooks.trial) return this.hooks.trial(def, publish, mocks, onExit);
    return this.hooks.factory(def, onExit);
  }

  /** Loads the script into its sandbox (throws with the script's error), then stores it. */
  async addScript(def: ScriptDef): Promise<void> {
    await registerScript(this.functions, def, this.config.basic.udfLimits);
    this.kv.set("script", def.id, JSON.stringify(def));
    this.scripts.set(def.id, def);
  }

  /** Registers or replaces a protobuf schema: parsed first (a bad .proto is refused), then stored. */
  putSchema(name: string, content: string, version: string): void {
    this.putSchemas([{ name, content, file: "", version }]);
  }

  /**
   * Registers schemas together (an uploaded zip: a .proto and the files it imports): each is
   * parsed against the registry as it will be, and nothing is stored unless all parse.
   */
  putSchemas(list: readonly SchemaEntry[]): void {
    const next = this.schemas.with(list);
    for (const s of list) next.check(s.name, s.content);
    this.schemas.adopt(next, list.map((s) => ({ ...s, file: this.schemaStore.save(s.name, s.content, s.version) })));
  }

  removeSchema(name: string): boolean {
    if (!this.schemas.get(name)) return false;
    this.schemaStore.remove(name);
    return this.schemas.delete(name);
  }

  removeScript(id: string): void {
    unregisterScript(this.functions, id);
    this.kv.delete("script", id);
    this.scripts.delete(id);
  }

  /** Runs `fn` at shutdown, before the rules stop (the console's sampler). */
  onClose(fn: () => void): void {
    this.closers.push(fn);
  }

  /** Graceful stop: rules stopped (sinks flushed) within the grace period, store closed. */
  async shutdown(): Promise<void> {
    for (const fn of this.closers.splice(0)) fn();
    if (this.patrolTimer) clearInterval(this.patrolTimer);
    this.patrolTimer = undefined;
    await this.rules.stopAll(this.config.basic.gracefulShutdownTimeoutMs);
    this.hooks.close?.();
    await this.connections.closeAll();
    await this.traces.close();
    this.dataServer.close();
    // Leaves the group (its partitions move at once) after the definitions written are stored.
    await this.cluster?.close();
    this.kv.close();
  }
}
