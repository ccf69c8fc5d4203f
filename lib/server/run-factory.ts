/**
 * The bridge from the management layer to the rule runtime: a RunFactory that starts a rule and
 * a validator that plans it without running. This file holds the plan-only implementation (used
 * until/unless a connector runtime is supplied): the rule is planned and its topology built with
 * eKuiper's node names, but no connector reads or writes.
 */
import { EngineError, ErrCode, errorText } from "../errors.ts";
import type { Zone } from "../value/time.ts";
import type { FuncEnv } from "../functions/registry.ts";
import type { Item } from "../core/item.ts";
import type { RuleRun, RunFactory, Topo } from "../runtime/lifecycle.ts";
import { NodeMetrics } from "../core/metrics.ts";
import { Topology } from "../runtime/topology.ts";
import type { SinkNode } from "../core/sink.ts";
import { planRule } from "../plan/plan.ts";
import { planGraph } from "../plan/graph.ts";
import { planOptions } from "../plan/rule-options.ts";
import type { StreamDef } from "../plan/streams.ts";
import type { RuleDef } from "../store/rule-def.ts";
import { WallClock } from "../window/clock.ts";

/** Sink types of eKuiper's default build (rules-and-sinks.md, preamble), plus the full-build `sql` (§12). */
export const SINK_TYPES = ["log", "logToMemory", "mqtt", "rest", "nop", "memory", "neuron", "file", "websocket", "sse", "redis", "redisPub", "sql"];

export interface RuntimeDeps {
  streams(): ReadonlyMap<string, StreamDef>;
  zone(): Zone;
}

function planOf(def: RuleDef, deps: RuntimeDeps, env: FuncEnv) {
  if (!def.select) throw new EngineError("only support sql rules", ErrCode.undefined);
  return planRule(def.select, deps.streams(), { env, zone: deps.zone(), ...planOptions(def.options) }).plan;
}

/** Checks the sink list: each action an object of known sink types with object props. */
export function checkActions(def: RuleDef): void {
  for (const a of def.actions) {
    for (const [type, props] of Object.entries(a)) {
      if (!SINK_TYPES.some((t) => t.toLowerCase() === type.toLowerCase())) throw new EngineError(`sink ${type} is not defined`, ErrCode.undefined);
      if (props === null || typeof props !== "object" || Array.isArray(props))
        throw new EngineError(`expect map[string]interface{} type for the action properties, but found ${JSON.stringify(props)}`, ErrCode.undefined);
    }
  }
}

export function planValidator(deps: RuntimeDeps): (def: RuleDef) => void {
  return (def) => {
    const env: FuncEnv = { now: () => Date.now(), zone: deps.zone(), ruleId: def.id, ruleStart: Date.now() };
    if (def.graph !== undefined) {
      planGraph(def.graph, deps.streams(), { env, zone: deps.zone(), ...planOptions(def.options) }, { temp: def.temp, checkSink: (type) => checkActions({ ...def, actions: [{ [type]: {} }] }) });
      return;
    }
    planOf(def, deps, env);
    checkActions(def);
  };
}

/** A sink that only counts: the helper nodes `transform`/`encode` and the sink node. */
class CountingSink implements SinkNode {
  readonly metrics: NodeMetrics[];
  constructor(type: string, i: number) {
    this.metrics = [new NodeMetrics("op", `${type}_${i}_0_transform`), new NodeMetrics("op", `${type}_${i}_1_encode`), new NodeMetrics("sink", `${type}_${i}`)];
  }
  push(_item: Item): void {
    const now = Date.now();
    for (const m of this.metrics) {
      m.recordsIn++;
      m.recordsOut++;
      m.lastInvocation = now;
    }
  }
  end(): void {}
}

/** Topology edges from the node order: each source → its chain → every sink's helper chain. */
export function chainTopo(sources: string[], ops: string[], sinks: NodeMetrics[][]): Topo {
  const edges: Record<string, string[]> = {};
  const link = (a: string, b: string) => (edges[a] ??= []).push(b);
  const heads = sinks.map((s) => (s[0]!.kind === "sink" ? "sink_" : "op_") + s[0]!.name);
  const first = ops[0];
  for (const s of sources) {
    if (first) link(s, first);
    else for (const h of heads) link(s, h);
  }
  for (let i = 0; i + 1 < ops.length; i++) link(ops[i]!, ops[i + 1]!);
  const last = ops[ops.length - 1];
  for (const chain of sinks) {
    const names = chain.map((m) => `${m.kind === "sink" ? "sink" : "op"}_${m.name}`);
    if (last) link(last, names[0]!);
    for (let i = 0; i + 1 < names.length; i++) link(names[i]!, names[i + 1]!);
  }
  const sorted: Record<string, string[]> = {};
  for (const k of Object.keys(edges).sort()) sorted[k] = edges[k]!;
  return { sources, edges: sorted };
}

export function planOnlyFactory(deps: RuntimeDeps): RunFactory {
  return (def): RuleRun => {
    const clock = new WallClock();
    let started = Date.now();
    const env: FuncEnv = { now: () => clock.now(), zone: deps.zone(), ruleId: def.id, get ruleStart() { return started; } };
    let plan;
    try {
      plan = planOf(def, deps, env);
      checkActions(def);
    } catch (e) {
      throw new EngineError(errorText(e), e instanceof EngineError ? e.code : ErrCode.undefined);
    }
    const sinks: CountingSink[] = [];
    def.actions.forEach((a, i) => {
      for (const type of Object.keys(a).sort()) sinks.push(new CountingSink(type, i));
    });
    const topo = new Topology(plan, { now: () => clock.now(), sendError: def.options.sendError, clock, zone: deps.zone() }, sinks);
    started = topo.startedAt;
    const nodes = topo.nodes();
    const sourceNames = plan.sources.map((s) => `source_${s.name}`);
    const opNames = nodes.filter((n) => n.kind === "op" && !sinks.some((s) => s.metrics.includes(n))).map((n) => `op_${n.name}`);
    const t = chainTopo(sourceNames, opNames, sinks.map((s) => s.metrics));
    return {
      nodes: () => nodes,
      topo: () => t,
      stop: async () => {
        topo.end();
        clock.stop();
      },
    };
  };
}
