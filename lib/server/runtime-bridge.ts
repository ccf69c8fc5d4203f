/**
 * Plugs the rule runtime (lib/runtime/rule.ts) into the daemon: one RuntimeEnv and SourceHub per
 * process, a rule validated afresh for every run (so a run plans against the stream definitions of
 * its start), KV confKeys visible to connectors, memory lookup tables, and trial runs whose results
 * go to SSE clients. The run handles go to server/lifecycle.ts as they are.
 */
import { memoryTableStats } from "../connectors/memory/lookup.ts";
import { parseSinkCommon } from "../sink/common.ts";
import type { SinkConnector, SinkContext, SinkItem } from "../sink/connector.ts";
import { SinkPipeline } from "../sink/pipeline.ts";
import { createRuntimeEnv, type RuntimeEnv } from "../runtime/env.ts";
import type { RunFactory } from "./lifecycle.ts";
import { RateLimitedErrors } from "../runtime/rate-limited-errors.ts";
import { resolveSourceProps } from "../connectors/sources.ts";
import { EngineError, ErrCode } from "../errors.ts";
import { Rule, type RunExit, type RunHandle } from "../runtime/rule.ts";
import { SourceHub } from "../runtime/sources.ts";
import type { SinkNode } from "../core/sink.ts";
import type { SourceConnector } from "../source/connector.ts";
import { SimulatorSource } from "../connectors/simulator/source.ts";
import type { StoredRule } from "../store/stored-rule.ts";
import type { Engine, RuntimeHooks } from "./engine.ts";
import { MemoryTables } from "./lookup-tables.ts";
import { PartitionedRun } from "./partitioned-run.ts";
import { partitionDurables, partitionKeyWarning, partitionedStream, sharedDurableError, twoStageOf, partitionRunId, streamsForPartition, withEpochHeader } from "./partitioned-stream.ts";
import type { RuntimeDeps } from "./engine.ts";
import { ensurePartialsStream, partialsSubject } from "../cluster/index.ts";
import { checkedTwoStage, startTwoStage } from "./two-stage-run.ts";

const utf8 = new TextDecoder();

/** The trial sink's connector: each encoded payload is one event to the trial's SSE clients. */
class TrialConnector implements SinkConnector {
  readonly bytes = true;
  constructor(private readonly publish: (payload: string) => void) {}
  open(ctx: SinkContext): void {
    ctx.status.connected();
  }
  send(item: SinkItem): void {
    const p = item.payload;
    this.publish(typeof p === "string" ? p : utf8.decode(p as Uint8Array));
  }
  close(): void {}
}

/** The trial's `sinkProps` (ruletest.ts carries them as the props of its only action). */
function trialSinkProps(def: StoredRule): Record<string, unknown> {
  const a = def.actions[0];
  const props = a ? Object.values(a)[0] : undefined;
  return props && typeof props === "object" && !Array.isArray(props) ? (props as Record<string, unknown>) : {};
}

function ruleJson(def: StoredRule) {
  return { id: def.id, name: def.name, sql: def.sql, select: def.select, actions: def.actions, options: def.options.raw, graph: def.graph, temp: def.temp };
}

export function ruleRuntime(deps: RuntimeDeps, engine: Engine): RuntimeHooks & { env: RuntimeEnv } {
  const basic = engine.config.basic;
  const env = createRuntimeEnv({
    etcDir: engine.paths.etc,
    dataDir: engine.paths.data,
    baseDir: engine.paths.etc ? `${engine.paths.etc}/..` : process.cwd(),
    vars: engine.env,
    zone: deps.zone(),
    ignoreCase: basic.ignoreCase,
    ruleDefaults: engine.config.rule,
    cacheDefaults: parseSinkCommon(engine.config.sink, undefined).cache,
    aesKey: typeof engine.config.doc.basic === "object" ? ((engine.config.doc.basic as Record<string, unknown>).aeskey as string | undefined) : undefined,
    sinkGraceMs: basic.gracefulShutdownTimeoutMs,
    outbound: engine.outbound,
    confKey: (kind, type, key) => engine.confKeys.get(kind, type, key),
    connections: engine.connections,
    dataServer: engine.dataServer,
    log: engine.log,
    functions: engine.functions,
    traces: engine.traces,
    schemas: engine.schemas,
  });
  // `PATCH /configs` may change the zone at run time: rules planned afterwards use the new one.
  Object.defineProperty(env, "zone", { get: () => deps.zone(), enumerable: true });
  const hub = new SourceHub(env);
  // Memory lookup tables live from CREATE TABLE (or the restore at start) to DROP TABLE.
  const tables = new MemoryTables(env.pubsub, engine.log);
  engine.catalog.onChange = (name, def) => tables.update(name, def);
  for (const [name, def] of engine.catalog.all()) tables.update(name, def);
  const create = (def: StoredRule, extraSinks?: SinkNode[], connectors?: ReadonlyMap<string, SourceConnector>) =>
    Rule.create(ruleJson(def), deps.streams(), env, hub, { ...(extraSinks ? { extraSinks } : {}), ...(connectors ? { connectors } : {}) });
  // The rules' error reports write through one function (each rule holds its report while it runs).
  const warn = (t: string): void => engine.log(t.trimEnd(), "warn");
  const factory: RunFactory = async (def, onExit) => {
    // In a group, a rule over a partitioned stream runs once per partition this member owns.
    const cluster = engine.cluster;
    const partitioned = cluster ? partitionedStream(def, deps.streams(), cluster.settings.partitions) : undefined;
    if (cluster && partitioned) {
      const stream = partitioned.stream;
      const durableOf = async (p: number) => String((await resolveSourceProps(streamsForPartition(deps.streams(), stream, p).get(stream.name)!, "nats", env)).durable ?? "");
      const shared = await sharedDurableError(stream, partitioned.count, durableOf);
      if (shared) throw new EngineError(`rule ${def.id}: ${shared}`, ErrCode.streamTable);
      const split = checkedTwoStage(twoStageOf(def, partitioned, engine.functions), def, partitioned.stream.name, deps.streams(), env, hub);
      const warning = partitionKeyWarning(def, partitioned);
      if (split && "plan" in split) engine.log(`rule ${def.id}: GROUP BY does not contain ${partitioned.key}, the partition key of stream ${partitioned.stream.name}: two-stage aggregation, the partials of each partition merged by the owner of partition 0`);
      else if (warning) engine.log(split ? `${warning}; not two-stage: ${split.reason}` : warning);
      const twoStage =
        split && "plan" in split
          ? { def, plan: split.plan, stream: partitioned.stream.name, partitions: partitioned.count, subject: partialsSubject(cluster.settings.group, def.id, def.sql), cluster, env, hub, dataDir: engine.paths.data, log: engine.log }
          : undefined;
      if (twoStage) await ensurePartialsStream(cluster.nc, cluster.settings.group);
      const run = new PartitionedRun({
        def,
        partitions: partitioned.count,
        cluster,
        dataDir: engine.paths.data,
        onExit,
        log: engine.log,
        exists: () => engine.rules.get(def.id) !== undefined,
        durables: (p) => partitionDurables(partitioned.stream, p),
        startPartition: async (p, epoch, fence, exit) => {
          // A partition given up hands over the state it stops with (qos ≥ 1 keeps checkpoints).
          const options = def.options.qos >= 1 ? { ...def.options, raw: { ...def.options.raw, enableSaveStateBeforeStop: true } } : def.options;
          const run = { ...def, id: partitionRunId(def.id, p), options, actions: withEpochHeader(def.actions, epoch) };
          if (twoStage) return startTwoStage(twoStage, { id: run.id, options: options.raw, actions: run.actions }, streamsForPartition(deps.streams(), partitioned.stream, p), p, epoch, fence, exit);
          const rule = Rule.create(ruleJson(run), streamsForPartition(deps.streams(), partitioned.stream, p), env, hub, { fence });
          return rule.start(exit);
        },
      });
      await run.open();
      engine.partitionRuns.set(def.id, run);
      return {
        nodes: () => run.nodes(),
        topo: () => run.topo(),
        stop: async () => {
          if (engine.partitionRuns.get(def.id) === run) engine.partitionRuns.delete(def.id);
          await run.stop();
        },
      };
    }
    engine.log(`rule ${def.id} starting with options ${JSON.stringify(def.options.raw)}`, "debug");
    // Decode and row errors reach the log as pipe mode's reach stderr: the first in full, then
    // counts (the rule's state changes, a stop by error included, are logged by the engine).
    const errors = new RateLimitedErrors(warn, { prefix: `rule ${def.id}: `, intervalMs: 10_000, reportFatal: false, summary: false, wantsMeta: false });
    // onExit reports EOF (`done`) and a run-time failure (`stopped by error`) to the lifecycle.
    const rule = Rule.create(ruleJson(def), deps.streams(), env, hub, { errors });
    return rule.start(reportExit(errors, onExit));
  };
  return {
    env,
    factory,
    close: () => tables.closeAll(),
    memoryTables: () => memoryTableStats(env.pubsub),
    validate: (def) => void create(def),
    trial: async (def, publish, mocks, onExit) => {
      const connectors = new Map<string, SourceConnector>();
      for (const [stream, m] of Object.entries(mocks ?? {})) connectors.set(stream, new SimulatorSource(m));
      // The results go through a real sink pipeline, so `sinkProps` (sendSingle, dataTemplate,
      // fields, format …) shape each event as they shape a sink's payloads (rest-api.md §8).
      const props = trialSinkProps(def);
      const common = parseSinkCommon(props, env.cacheDefaults);
      const sink = new SinkPipeline({
        ruleId: def.id,
        type: "trial",
        index: 0,
        props,
        common: { ...common, cache: { ...common.cache, enableCache: false } },
        connector: new TrialConnector(publish),
        dataDir: engine.paths.data,
        aesKey: env.aesKey,
        schemas: env.schemas,
        log: engine.log,
      });
      const rule = create({ ...def, actions: [] }, [sink], connectors);
      sink.open();
      let run: RunHandle;
      try {
        run = await rule.start(onExit);
      } catch (e) {
        await sink.close(0);
        throw e;
      }
      return {
        nodes: () => run.nodes(),
        topo: () => run.topo(),
        scanTables: () => run.scanTables(),
        resetState: (stream, input) => run.resetState(stream, input),
        stop: async () => {
          await run.stop();
          await sink.close(basic.gracefulShutdownTimeoutMs);
        },
      };
    },
  };
}

/** A run's exit: its error report ends, then the lifecycle hears it (made outside the factory's frame, which the run would otherwise hold). */
function reportExit(errors: RateLimitedErrors, onExit: (exit: RunExit) => void): (exit: RunExit) => void {
  return (exit) => {
    errors.end();
    onExit(exit);
  };
}
