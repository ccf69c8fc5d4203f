/**
 * Graph rules (graph-rules.md): the `graph` property of a rule → a plan of the same operator specs
 * the SQL planner builds, wired as a DAG. Checks run in eKuiper's order with its exact messages
 * (§2); every node expression is parsed by the SQL parser and compiled once. The document and its
 * topology are graph-doc.ts, source nodes graph-source.ts, shapes graph-shape.ts, operator nodes
 * graph-operator.ts; this file runs the steps in order.
 */
import { errorText } from "../errors.ts";
import { edgeInputs, edgePorts, fail, parseGraphDoc, visitOrder, wrapProps, type GraphDoc } from "./graph-doc.ts";
import { GraphOperators, OPERATORS, type GraphOpSpec } from "./graph-operator.ts";
import { propStrings } from "./graph-props.ts";
import { checkShape, rowShape, type Shape } from "./graph-shape.ts";
import { sourceDef, sourcePlan, type GraphSource, type SourceHost } from "./graph-source.ts";
import type { PlanOptions } from "./plan.ts";
import type { StreamDef } from "./streams.ts";

export type { GraphOpSpec } from "./graph-operator.ts";
export type { GraphSource } from "./graph-source.ts";

export interface GraphOperator {
  readonly node: string;
  readonly spec: GraphOpSpec;
  /** Downstream graph node names per output port (only a switch has ports ≥ 1). */
  readonly outs: string[][];
}

export interface GraphSink {
  readonly node: string;
  readonly type: string;
  readonly props: Record<string, unknown>;
}

export interface GraphPlan {
  readonly sources: GraphSource[];
  /** Operators in visiting order. */
  readonly ops: GraphOperator[];
  readonly sinks: GraphSink[];
}

/** What the host knows that plan/ may not import: connector registries. */
export interface GraphHost extends SourceHost {
  /** Throws the sink's provisioning error (`sink <t> is not defined` …). */
  readonly checkSink?: (type: string, props: Record<string, unknown>) => void;
  readonly useSliceTuple?: boolean;
}

/** Plans the `graph` property (already JSON-decoded) of rule `ruleId`. */
export function planGraph(graph: unknown, streams: ReadonlyMap<string, StreamDef>, opts: PlanOptions, host: GraphHost = {}): GraphPlan {
  return build(parseGraphDoc(graph), streams, opts, host);
}

function build(doc: GraphDoc, streams: ReadonlyMap<string, StreamDef>, opts: PlanOptions, host: GraphHost): GraphPlan {
  if (host.useSliceTuple) throw fail("graph mode does not support slice-tuple mode");
  const { nodes, edges, sourceNames } = doc;
  /** Emitter names (streams and tables) → their definitions. */
  const emitters = new Map<string, StreamDef>();
  /** Graph node name → what its source or sink node planned to. */
  const built = new Map<string, GraphSink | StreamDef>();
  const operators = new GraphOperators(opts, emitters, built);
  const sources: GraphSource[] = [];
  // §2 step 2: the listed sources, in order.
  for (const name of sourceNames) {
    const n = nodes.get(name);
    if (!n) throw fail(`source node ${name} not defined`);
    if (!edges.has(name)) throw fail(`no edge defined for source node ${name}`);
    let def: StreamDef;
    try {
      def = sourceDef(n, streams, opts, host);
    } catch (e) {
      throw wrapProps("source", n, e);
    }
    emitters.set(def.name, def);
    built.set(name, def);
  }
  // Step 3: every other node, in document order.
  const sinks: GraphSink[] = [];
  for (const n of nodes.values()) {
    if (n.type === "source") continue;
    if (n.type === "sink") {
      if (edges.has(n.name)) throw fail(`sink ${n.name} has edge`);
      try {
        host.checkSink?.(n.nodeType, n.props);
      } catch (e) {
        throw fail(errorText(e));
      }
      const s = { node: n.name, type: n.nodeType, props: n.props };
      sinks.push(s);
      built.set(n.name, s);
    } else if (n.type === "operator") {
      if (!edges.has(n.name)) throw fail(`no edge defined for operator node ${n.name}`);
      if (!OPERATORS.has(n.nodeType.toLowerCase())) throw fail(`unknown operator type ${n.nodeType}`);
      // Props are checked here, before edges and shapes (§2 step 3); built again once shapes are known.
      operators.operator(n, rowShape(), []);
    } else throw fail(`unknown node type ${n.type}`);
  }
  // Steps 4 and 5: edges name defined nodes; the visiting order.
  const outs = edgePorts(doc);
  const inputs = edgeInputs(outs);
  const order = visitOrder(doc, outs, inputs);
  // Step 6: shapes in visiting order, building each operator with its input's shape.
  const shapes = new Map<string, Shape>();
  for (const s of sourceNames) shapes.set(s, rowShape());
  const ops: GraphOperator[] = [];
  for (const name of order) {
    const n = nodes.get(name)!;
    const ins = inputs.get(name) ?? [];
    if (n.type === "sink") continue;
    const inShapes = ins.map((i) => [i, shapes.get(i)!] as const).filter(([, s]) => s !== undefined);
    const shape = checkShape(n, inShapes, built);
    shapes.set(name, shape.out);
    const spec = operators.operator(n, shape.in, ins);
    if (!spec) continue;
    ops.push({ node: name, spec, outs: outs.get(name) ?? [] });
  }
  // Step 7: linking.
  for (const [from, ports] of outs) {
    const n = nodes.get(from)!;
    const isSwitch = n.type === "operator" && n.nodeType.toLowerCase() === "switch";
    if (ports.length > 1 && !isSwitch) throw fail(`node ${from} is not a switch node but have multiple output`);
    const cases = isSwitch ? propStrings(n.props, "cases").length : 0;
    // eKuiper indexes its case outputs without a check: a Go index panic (§3).
    if (isSwitch && ports.length > cases) throw fail(`runtime error: index out of range [${cases}] with length ${cases}`);
  }
  for (const name of sourceNames) {
    const def = built.get(name) as StreamDef;
    if (def.kind === "table") continue;
    sources.push(sourcePlan(name, def, (outs.get(name) ?? [])[0] ?? [], opts));
  }
  return { sources, ops, sinks };
}
