/**
 * The graph document of a graph rule (graph-rules.md §1–§2): `nodes` and `topo` decoded as Go's
 * encoding/json decodes them into eKuiper's RuleGraph, with its exact messages; then the edges'
 * output ports (§2 step 4) and the visiting order of the nodes (step 5).
 */
import { checkLimit } from "../value/compile-budget.ts";
import { EngineError, ErrCode, errorText } from "../errors.ts";
import { fmtV, type Value } from "../value/values.ts";
import type { Props } from "./graph-props.ts";

/** One node of the document: `type` is source, operator or sink; `nodeType` what kind of it. */
export interface NodeDef {
  readonly name: string;
  readonly type: string;
  readonly nodeType: string;
  readonly props: Props;
}

/** The decoded document: nodes in document order, the raw edge lists, the listed sources. */
export interface GraphDoc {
  readonly nodes: Map<string, NodeDef>;
  readonly edges: Map<string, unknown[]>;
  readonly sourceNames: string[];
}

// eKuiper answers every graph planning error with code 1000 (graph-rules.md §9).
export const fail = (m: string) => new EngineError(m, ErrCode.undefined);

/** A node's props failed to plan: eKuiper's wrapping of the cause. */
export const wrapProps = (kind: string, n: NodeDef, e: unknown) => fail(`parse ${kind} ${n.name} with ${fmtV(n.props as Value)} error: ${errorText(e)}`);

function isObj(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

/** Case-insensitive key of a JSON object (Go encoding/json into a struct). */
function key(o: Record<string, unknown>, k: string): unknown {
  if (k in o) return o[k];
  const l = k.toLowerCase();
  for (const x of Object.keys(o)) if (x.toLowerCase() === l) return o[x];
  return undefined;
}

/** Decodes the `graph` property (already JSON-decoded) as eKuiper unmarshals it. */
export function parseGraphDoc(graph: unknown): GraphDoc {
  if (!isObj(graph)) throw fail(`json: cannot unmarshal ${Array.isArray(graph) ? "array" : typeof graph} into Go struct field Rule.graph of type def.RuleGraph`);
  const nodeMap = new Map<string, NodeDef>();
  const edgeMap = new Map<string, unknown[]>();
  const nodes = key(graph, "nodes");
  const topo = key(graph, "topo");
  if (nodes !== undefined && nodes !== null && !isObj(nodes)) throw fail("json: cannot unmarshal into Go struct field RuleGraph.graph.nodes of type map[string]*def.GraphNode");
  // Each node is parsed and planned like a small rule: the compile budget bounds how many.
  if (nodes) checkLimit("graphNodes", Object.keys(nodes).length, "the graph", "nodes");
  for (const [name, n] of Object.entries(nodes ?? {})) {
    if (!isObj(n)) throw fail(`json: cannot unmarshal into Go struct field RuleGraph.graph.nodes of type def.GraphNode`);
    const str = (k: string) => {
      const v = key(n, k);
      if (v !== undefined && v !== null && typeof v !== "string") throw fail(`json: cannot unmarshal ${typeof v} into Go struct field GraphNode.graph.nodes.${k} of type string`);
      return (v as string | undefined) ?? "";
    };
    const props = key(n, "props");
    if (props !== undefined && props !== null && !isObj(props)) throw fail(`json: cannot unmarshal into Go struct field GraphNode.graph.nodes.props of type map[string]interface {}`);
    nodeMap.set(name, { name, type: str("type"), nodeType: str("nodeType"), props: (props as Props | null) ?? {} });
  }
  if (!isObj(topo)) throw fail("runtime error: invalid memory address or nil pointer dereference");
  const sources = key(topo, "sources") ?? [];
  if (!Array.isArray(sources) || sources.some((s) => typeof s !== "string")) throw fail("json: cannot unmarshal into Go struct field PrintableTopo.graph.topo.sources of type []string");
  const edges = key(topo, "edges") ?? {};
  if (!isObj(edges)) throw fail(`json: cannot unmarshal ${typeof edges} into Go struct field PrintableTopo.graph.topo.edges of type map[string][]interface {}`);
  for (const [k, v] of Object.entries(edges)) {
    if (v !== null && !Array.isArray(v)) throw fail(`json: cannot unmarshal ${typeof v} into Go struct field PrintableTopo.graph.topo.edges of type []interface {}`);
    edgeMap.set(k, v ?? []);
  }
  return { nodes: nodeMap, edges: edgeMap, sourceNames: sources as string[] };
}

/** §2 step 4: each node's downstream node names per output port; edges name defined nodes. */
export function edgePorts(doc: GraphDoc): Map<string, string[][]> {
  const outs = new Map<string, string[][]>();
  for (const [from, list] of doc.edges) {
    if (!doc.nodes.has(from)) throw fail(`node ${from} is not defined`);
    const ports: string[][] = [];
    list.forEach((el, i) => {
      if (typeof el === "string") (ports[0] ??= []).push(el);
      else if (Array.isArray(el)) {
        const port = (ports[i] ??= []);
        for (const t of el) {
          if (typeof t !== "string") throw fail(`invalid edge toNode ${fmtV(el as Value)}`);
          port.push(t);
        }
      }
    });
    for (const p of ports) for (const t of p ?? []) if (!doc.nodes.has(t)) throw fail(`node ${t} is not defined`);
    outs.set(from, ports);
  }
  return outs;
}

/** Each node's upstream node names, from the output ports. */
export function edgeInputs(outs: ReadonlyMap<string, string[][]>): Map<string, string[]> {
  const inputs = new Map<string, string[]>();
  for (const [from, ports] of outs) for (const p of ports) for (const t of p ?? []) (inputs.get(t) ?? inputs.set(t, []).get(t)!).push(from);
  return inputs;
}

/**
 * §2 step 5: depth-first from the sources; a node is visited on its last incoming edge. Every
 * node but the sources must be reached; an operator takes several inputs only where eKuiper
 * allows it (§3).
 */
export function visitOrder(doc: GraphDoc, outs: ReadonlyMap<string, string[][]>, inputs: ReadonlyMap<string, string[]>): string[] {
  const order: string[] = [];
  const arrivals = new Map<string, number>();
  const visit = (name: string, depth: number) => {
    if (depth > doc.nodes.size) throw fail(`graph has a cycle through source node ${name}`);
    for (const p of outs.get(name) ?? []) {
      for (const t of p ?? []) {
        if (doc.sourceNames.includes(t)) throw fail(`graph has a cycle through source node ${t}`);
        const k = (arrivals.get(t) ?? 0) + 1;
        arrivals.set(t, k);
        if (k === (inputs.get(t)?.length ?? 0)) {
          order.push(t);
          visit(t, depth + 1);
        }
      }
    }
  };
  for (const s of doc.sourceNames) visit(s, 0);
  for (const n of doc.nodes.values()) if (!doc.sourceNames.includes(n.name) && !order.includes(n.name)) throw fail("can't find node ");
  for (const name of order) {
    const n = doc.nodes.get(name)!;
    if (n.type !== "operator") continue;
    const k = n.nodeType.toLowerCase();
    if ((inputs.get(name)?.length ?? 0) > 1 && k !== "window" && k !== "watermark" && k !== "join")
      throw fail(`operator ${name} of type ${n.nodeType} does not allow multiple inputs`);
  }
  return order;
}
