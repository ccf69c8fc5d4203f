/**
 * Plugs the rule runtime (lib/runtime/rule.ts) into the daemon: one RuntimeEnv and SourceHub per
 * process, a fresh `Rule` per run (so a run plans against the stream definitions of its start),
 * KV confKeys visible to connectors, and trial runs whose results go to SSE clients.
 */
import { RowError } from "../errors.ts";
import { encodeGoJson } from "../io/formats/json-encode.ts";
import { parseSinkCommon } from "../io/sinks/common.ts";
import { createRuntimeEnv, type RuntimeEnv } from "../runtime/env.ts";
import { Emission, type Item } from "../runtime/item.ts";
import type { RuleRun, RunFactory } from "../runtime/lifecycle.ts";
import { NodeMetrics } from "../runtime/metrics.ts";
import { Rule } from "../runtime/rule.ts";
import { SourceHub } from "../runtime/sources.ts";
import type { SinkNode } from "../runtime/topology.ts";
import type { SourceConnector } from "../io/sources/source.ts";
import { SimulatorSource } from "../io/sources/simulator.ts";
import type { RuleDef } from "../store/rule-def.ts";
import type { Engine, RuntimeHooks } from "./engine.ts";
import type { RuntimeDeps } from "./run-factory.ts";

/** A host sink that publishes each result to a trial's SSE clients (node `<id>_0`). */
class TrialSink implements SinkNode {
  readonly metrics = [new NodeMetrics("sink", "trial_0")];
  constructor(private readonly publish: (payload: string) => void) {}
  push(item: Item): void {
    const m = this.metrics[0]!;
    m.recordsIn++;
    let payload: string;
    if (item instanceof Emission) payload = encodeGoJson(item.rows);
    else if (item instanceof RowError) payload = encodeGoJson({ error: item.message });
    else return;
    m.recordsOut++;
    this.publish(payload);
  }
  end(): void {}
}

function ruleJson(def: RuleDef) {
  return { id: def.id, name: def.name, sql: def.sql, select: def.select, actions: def.actions, options: def.options.raw };
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
    enablePrivateNet: basic.enablePrivateNet,
    confKey: (kind, type, key) => engine.confKeys.get(kind, type, key),
    connections: engine.connections,
    dataServer: engine.dataServer,
    log: engine.log,
  });
  // `PATCH /configs` may change the zone at run time: rules planned afterwards use the new one.
  Object.defineProperty(env, "zone", { get: () => deps.zone(), enumerable: true });
  const hub = new SourceHub(env);
  const create = (def: RuleDef, extraSinks?: SinkNode[], connectors?: ReadonlyMap<string, SourceConnector>) =>
    Rule.create(ruleJson(def), deps.streams(), env, hub, { ...(extraSinks ? { extraSinks } : {}), ...(connectors ? { connectors } : {}) });
  const wrap = (rule: Rule): RuleRun => ({
    nodes: () => rule.nodes(),
    topo: () => rule.topo() ?? { sources: [], edges: {} },
    stop: () => rule.stop(),
  });
  const factory: RunFactory = async (def, onExit) => {
    const rule = create(def);
    // onEnd fires for EOF (`done`) and for a run-time failure (`stopped by error`).
    rule.onEnd = (r) => onExit(r.state === "stopped by error" ? { kind: "error", message: "" } : { kind: "eof" });
    await rule.start();
    return wrap(rule);
  };
  return {
    env,
    factory,
    validate: (def) => void create(def),
    trial: async (def, publish, mocks) => {
      const connectors = new Map<string, SourceConnector>();
      for (const [stream, m] of Object.entries(mocks ?? {})) connectors.set(stream, new SimulatorSource(m));
      const rule = create({ ...def, actions: [] }, [new TrialSink(publish)], connectors);
      await rule.start();
      return wrap(rule);
    },
  };
}

