/**
 * `GET /rules/{id}/topo` (rest-api.md §7.1) of a SQL rule's execution: the source nodes and the
 * edges of the chain source → source helpers → operators → each sink's nodes, keys sorted.
 * (A graph rule's topology is its graph's: Topology.graphTopo.)
 */
import type { SinkNode } from "../core/sink.ts";
import type { RulePlan } from "../plan/specs.ts";

export interface TopoJson {
  sources: string[];
  edges: Record<string, string[]>;
}

export function topoJson(plan: RulePlan, sinkNodes: readonly SinkNode[]): TopoJson {
  const edges = new Map<string, string[]>();
  const add = (a: string, b: string) => {
    const l = edges.get(a);
    if (l) l.push(b);
    else edges.set(a, [b]);
  };
  const ops = plan.ops.map((o) => "op_" + o.name);
  const sinkHeads: string[][] = sinkNodes.map((s) => s.metrics.map((m) => `${m.kind}_${m.name}`));
  const first = ops[0] ?? sinkHeads.map((h) => h[0]!);
  const sources: string[] = [];
  for (const src of plan.sources) {
    const chain = ["source_" + src.name, ...src.helpers.map((h) => "op_" + h.name)];
    sources.push(chain[0]!);
    for (let i = 0; i + 1 < chain.length; i++) add(chain[i]!, chain[i + 1]!);
    const last = chain[chain.length - 1]!;
    for (const f of Array.isArray(first) ? first : [first]) add(last, f);
  }
  for (let i = 0; i + 1 < ops.length; i++) add(ops[i]!, ops[i + 1]!);
  const lastOp = ops[ops.length - 1];
  for (const chain of sinkHeads) {
    if (lastOp) add(lastOp, chain[0]!);
    for (let i = 0; i + 1 < chain.length; i++) add(chain[i]!, chain[i + 1]!);
  }
  const out: Record<string, string[]> = {};
  for (const k of [...edges.keys()].sort()) out[k] = edges.get(k)!;
  return { sources, edges: out };
}
