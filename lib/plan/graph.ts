/**
 * Graph rules (graph-rules.md): the `graph` property of a rule → a plan of the same operator specs
 * the SQL planner builds, wired as a DAG. Checks run in eKuiper's order with its exact messages
 * (§2); every node expression is parsed by the SQL parser and compiled once.
 */
import { checkLimit } from "../value/compile-budget.ts";
import { EngineError, ErrCode, errorText } from "../errors.ts";
import { compileExpr, type Evaluator, type Scope } from "../expr/compile.ts";
import type { Expr, SelectStatement } from "../sql/ast.ts";
import { parseSelect } from "../sql/parse.ts";
import { renderExpr, type BoundField } from "../sql/render.ts";
import { projectSpecOf } from "./project-spec.ts";
import { walk } from "../sql/walk.ts";
import { fmtV, type Value } from "../value/values.ts";
import { conjuncts } from "./lookup.ts";
import type { PlanOptions } from "./plan.ts";
import { prop, propBool, propInt, propObjects, propString, propStrings, type Props } from "./graph-props.ts";
import type { JoinSpec, OpSpec, ProjectSpec, SortKey, SourcePlan } from "./specs.ts";
import { isLookupTable, type StreamDef } from "./streams.ts";
import { extractWindow } from "./window-spec.ts";

/** Operators only graphs have (switch, function/aggfunc columns, pick that keeps flowing). */
export type GraphOpSpec =
  | OpSpec
  | { kind: "switch"; name: string; cases: Evaluator[]; texts: string[]; stopAtFirstMatch: boolean; aggregate: boolean }
  | { kind: "column"; name: string; field: string; eval: Evaluator; aggregate: boolean }
  | { kind: "pick"; name: string; spec: ProjectSpec };

export interface GraphSource extends SourcePlan {
  /** Graph node name; its downstream graph nodes. */
  readonly node: string;
  readonly outs: string[];
}

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
export interface GraphHost {
  readonly sourceTypeExists?: (type: string) => boolean;
  /** Throws the sink's provisioning error (`sink <t> is not defined` …). */
  readonly checkSink?: (type: string, props: Record<string, unknown>) => void;
  readonly temp?: boolean;
  readonly useSliceTuple?: boolean;
}

interface NodeDef {
  readonly name: string;
  readonly type: string;
  readonly nodeType: string;
  readonly props: Props;
}

type Shape = { row: boolean; merged: boolean; grouped: boolean };

// eKuiper answers every graph planning error with code 1000 (graph-rules.md §9).
const fail = (m: string) => new EngineError(m, ErrCode.undefined);

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

const wrapProps = (kind: string, n: NodeDef, e: unknown) => fail(`parse ${kind} ${n.name} with ${fmtV(n.props as Value)} error: ${errorText(e)}`);

/** Plans the `graph` property (already JSON-decoded) of rule `ruleId`. */
export function planGraph(graph: unknown, streams: ReadonlyMap<string, StreamDef>, opts: PlanOptions, host: GraphHost = {}): GraphPlan {
  return new GraphPlanner(graph, streams, opts, host).build();
}

class GraphPlanner {
  private readonly nodes = new Map<string, NodeDef>();
  private readonly edges = new Map<string, unknown[]>();
  private readonly sourceNames: string[];
  private readonly scope: Scope;
  private readonly aggScope: Scope;
  /** Emitter names (streams and tables) → their definitions. */
  private readonly emitters = new Map<string, StreamDef>();
  /** Graph node name → emitter name for source nodes. */
  private readonly emitterOf = new Map<string, string>();
  private readonly built = new Map<string, GraphSource | GraphOpSpec | GraphSink | StreamDef>();

  constructor(
    graph: unknown,
    private readonly streams: ReadonlyMap<string, StreamDef>,
    private readonly opts: PlanOptions,
    private readonly host: GraphHost,
  ) {
    if (!isObj(graph)) throw fail(`json: cannot unmarshal ${Array.isArray(graph) ? "array" : typeof graph} into Go struct field Rule.graph of type def.RuleGraph`);
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
      this.nodes.set(name, { name, type: str("type"), nodeType: str("nodeType"), props: (props as Props | null) ?? {} });
    }
    if (!isObj(topo)) throw fail("runtime error: invalid memory address or nil pointer dereference");
    const sources = key(topo, "sources") ?? [];
    if (!Array.isArray(sources) || sources.some((s) => typeof s !== "string")) throw fail("json: cannot unmarshal into Go struct field PrintableTopo.graph.topo.sources of type []string");
    this.sourceNames = sources as string[];
    const edges = key(topo, "edges") ?? {};
    if (!isObj(edges)) throw fail(`json: cannot unmarshal ${typeof edges} into Go struct field PrintableTopo.graph.topo.edges of type map[string][]interface {}`);
    for (const [k, v] of Object.entries(edges)) {
      if (v !== null && !Array.isArray(v)) throw fail(`json: cannot unmarshal ${typeof v} into Go struct field PrintableTopo.graph.topo.edges of type []interface {}`);
      this.edges.set(k, v ?? []);
    }
    const callState = new Map<Expr, { state: unknown }>();
    this.scope = { env: opts.env, functions: opts.functions, aggregate: false, cachedCalls: new Map(), callState, hits: { row: undefined, agg: undefined }, ignoreCase: opts.ignoreCase };
    this.aggScope = { ...this.scope, aggregate: true };
  }

  build(): GraphPlan {
    if (this.host.useSliceTuple) throw fail("graph mode does not support slice-tuple mode");
    const sources: GraphSource[] = [];
    // §2 step 2: the listed sources, in order.
    for (const name of this.sourceNames) {
      const n = this.nodes.get(name);
      if (!n) throw fail(`source node ${name} not defined`);
      if (!this.edges.has(name)) throw fail(`no edge defined for source node ${name}`);
      let def: StreamDef;
      try {
        def = this.sourceDef(n);
      } catch (e) {
        throw wrapProps("source", n, e);
      }
      this.emitters.set(def.name, def);
      this.emitterOf.set(name, def.name);
      this.built.set(name, def);
    }
    // Step 3: every other node, in document order.
    const sinks: GraphSink[] = [];
    for (const n of this.nodes.values()) {
      if (n.type === "source") continue;
      if (n.type === "sink") {
        if (this.edges.has(n.name)) throw fail(`sink ${n.name} has edge`);
        try {
          this.host.checkSink?.(n.nodeType, n.props);
        } catch (e) {
          throw fail(errorText(e));
        }
        const s = { node: n.name, type: n.nodeType, props: n.props };
        sinks.push(s);
        this.built.set(n.name, s);
      } else if (n.type === "operator") {
        if (!this.edges.has(n.name)) throw fail(`no edge defined for operator node ${n.name}`);
        if (!OPERATORS.has(n.nodeType.toLowerCase())) throw fail(`unknown operator type ${n.nodeType}`);
        // Props are checked here, before edges and shapes (§2 step 3); built again once shapes are known.
        this.operator(n, { row: true, merged: false, grouped: false }, []);
      } else throw fail(`unknown node type ${n.type}`);
    }
    // Step 4: edges name defined nodes.
    const outs = new Map<string, string[][]>();
    for (const [from, list] of this.edges) {
      if (!this.nodes.has(from)) throw fail(`node ${from} is not defined`);
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
      for (const p of ports) for (const t of p ?? []) if (!this.nodes.has(t)) throw fail(`node ${t} is not defined`);
      outs.set(from, ports);
    }
    // Step 5: depth-first from the sources; a node is visited on its last incoming edge.
    const inputs = new Map<string, string[]>();
    for (const [from, ports] of outs) for (const p of ports) for (const t of p ?? []) (inputs.get(t) ?? inputs.set(t, []).get(t)!).push(from);
    const order: string[] = [];
    const arrivals = new Map<string, number>();
    const visit = (name: string, depth: number) => {
      if (depth > this.nodes.size) throw fail(`graph has a cycle through source node ${name}`);
      for (const p of outs.get(name) ?? []) {
        for (const t of p ?? []) {
          if (this.sourceNames.includes(t)) throw fail(`graph has a cycle through source node ${t}`);
          const k = (arrivals.get(t) ?? 0) + 1;
          arrivals.set(t, k);
          if (k === (inputs.get(t)?.length ?? 0)) {
            order.push(t);
            visit(t, depth + 1);
          }
        }
      }
    };
    for (const s of this.sourceNames) visit(s, 0);
    for (const n of this.nodes.values()) if (!this.sourceNames.includes(n.name) && !order.includes(n.name)) throw fail("can't find node ");
    // Multiple inputs (§3).
    for (const name of order) {
      const n = this.nodes.get(name)!;
      if (n.type !== "operator") continue;
      const k = n.nodeType.toLowerCase();
      if ((inputs.get(name)?.length ?? 0) > 1 && k !== "window" && k !== "watermark" && k !== "join")
        throw fail(`operator ${name} of type ${n.nodeType} does not allow multiple inputs`);
    }
    // Step 6: shapes in visiting order, building each operator with its input's shape.
    const shapes = new Map<string, Shape>();
    for (const s of this.sourceNames) shapes.set(s, { row: true, merged: false, grouped: false });
    const ops: GraphOperator[] = [];
    for (const name of order) {
      const n = this.nodes.get(name)!;
      const ins = inputs.get(name) ?? [];
      if (n.type === "sink") continue;
      const inShapes = ins.map((i) => [i, shapes.get(i)!] as const).filter(([, s]) => s !== undefined);
      const shape = this.checkShape(n, inShapes);
      shapes.set(name, shape.out);
      const spec = this.operator(n, shape.in, ins);
      if (!spec) continue;
      ops.push({ node: name, spec, outs: outs.get(name) ?? [] });
    }
    // Step 7: linking.
    for (const [from, ports] of outs) {
      const n = this.nodes.get(from)!;
      const isSwitch = n.type === "operator" && n.nodeType.toLowerCase() === "switch";
      if (ports.length > 1 && !isSwitch) throw fail(`node ${from} is not a switch node but have multiple output`);
      const cases = isSwitch ? propStrings(n.props, "cases").length : 0;
      // eKuiper indexes its case outputs without a check: a Go index panic (§3).
      if (isSwitch && ports.length > cases) throw fail(`runtime error: index out of range [${cases}] with length ${cases}`);
    }
    for (const name of this.sourceNames) {
      const def = this.built.get(name) as StreamDef;
      if (def.kind === "table") continue;
      sources.push(this.sourcePlan(name, def, (outs.get(name) ?? [])[0] ?? []));
    }
    return { sources, ops, sinks };
  }

  private sourceDef(n: NodeDef): StreamDef {
    const p = n.props;
    const sourceName = propString(p, "sourceName");
    if (sourceName) {
      const kind = propString(p, "sourceType") || "stream";
      if (kind !== "stream" && kind !== "table") throw new Error(`source type ${kind} not supported`);
      const def = this.streams.get(sourceName);
      if (!def) throw new Error(`fail to get stream ${sourceName}, please check if stream is created`);
      if (def.options.TEMP && !this.host.temp) throw new Error(`temp stream ${sourceName} can only be used by temp rules`);
      if (def.kind !== kind) throw new Error(kind === "table" ? `stream ${sourceName} is not a table` : `table ${sourceName} is not a stream`);
      const type = def.options.TYPE || "mqtt";
      if (n.nodeType !== type) throw new Error(`source type ${n.nodeType} does not match the stream type ${type}`);
      if (this.opts.isEventTime && def.kind === "stream" && !def.options.TIMESTAMP)
        throw new Error("preprocessor is set to be event time but stream option TIMESTAMP not found");
      return def;
    }
    if (this.host.sourceTypeExists && !this.host.sourceTypeExists(n.nodeType)) throw new Error(`source type ${n.nodeType} not found`);
    let schemaid = propString(p, "schemaid");
    const sn = prop(p, "schemaName");
    const sm = prop(p, "schemaMessage");
    if (!schemaid && typeof sn === "string" && typeof sm === "string") schemaid = `${sn}.${sm}`;
    const opt = (k: string) => propString(p, k) || undefined;
    const options = {
      TYPE: n.nodeType,
      DATASOURCE: opt("datasource"),
      FORMAT: opt("format"),
      KEY: opt("key"),
      CONF_KEY: opt("confKey"),
      TIMESTAMP: opt("timestamp"),
      TIMESTAMP_FORMAT: opt("timestampFormat"),
      SCHEMAID: schemaid || undefined,
      VERSION: opt("version"),
      EXTRA: opt("extra"),
      KIND: opt("kind"),
      DELIMITER: opt("delimiter"),
      STRICT_VALIDATION: propBool(p, "strictValidation") || undefined,
      SHARED: propBool(p, "shared") || undefined,
      TEMP: propBool(p, "temp") || undefined,
      RETAIN_SIZE: propInt(p, "retainSize") || undefined,
    };
    for (const k of Object.keys(options) as (keyof typeof options)[]) if (options[k] === undefined) delete options[k];
    return { name: n.name, kind: "stream", fields: null, options, statement: "" };
  }

  private sourcePlan(node: string, def: StreamDef, outs: string[]): GraphSource {
    // Helpers are numbered from 2 per source (§8), as a SQL rule with one source.
    let idx = 1;
    const helpers: OpSpec[] = [];
    if (this.opts.decoder?.(def)) helpers.push({ kind: "decoder", name: `${++idx}_decoder` });
    const eventTime = !!this.opts.isEventTime;
    const strict = def.fields && def.options.STRICT_VALIDATION ? def.fields : null;
    if (strict || eventTime)
      helpers.push({
        kind: "preprocessor",
        name: `${++idx}_preprocessor`,
        spec: { strict, timestampField: eventTime ? def.options.TIMESTAMP : undefined, timestampFormat: def.options.TIMESTAMP_FORMAT, zone: this.opts.zone },
      });
    return { def, name: def.name, helpers, columns: null, node, outs };
  }

  private checkShape(n: NodeDef, ins: (readonly [string, Shape])[]): { in: Shape; out: Shape } {
    const k = n.nodeType.toLowerCase();
    // Lookup-table sources feed a join without a shape of their own.
    const streamIns = ins.filter(([i]) => {
      const b = this.built.get(i);
      return !(b && "kind" in b && (b as StreamDef).kind === "table" && !("helpers" in b));
    });
    const list = streamIns.length ? streamIns : ins;
    if (k === "join" && n.nodeType === "join" && list.length > 1) throw fail(`join node ${n.name} does not allow multiple stream inputs`);
    const first = list[0]?.[1] ?? { row: true, merged: false, grouped: false };
    const mismatch = (up: string, reason: string) => fail(`node ${up} output does not match node ${n.name} input: ${reason}`);
    const kindOf = (s: Shape) => (s.row ? "row" : "collection");
    for (const [up, s] of list) {
      switch (k) {
        case "watermark":
        case "window":
          if (!s.row) throw mismatch(up, `input type mismatch, expect row, got ${kindOf(s)}`);
          if (s.merged) throw mismatch(up, "row type mismatch, expect single emitter row, got merged row");
          break;
        case "join":
          if (s.grouped) throw mismatch(up, "collection type mismatch, expect non-grouped collection, got grouped collection");
          if (s.merged) throw mismatch(up, "row type mismatch, expect single emitter row, got merged row");
          break;
        case "groupby":
          if (s.row) throw mismatch(up, `input type mismatch, expect collection, got row`);
          if (s.grouped) throw mismatch(up, "collection type mismatch, expect non-grouped collection, got grouped collection");
          break;
        case "aggfunc":
        case "orderby":
          if (s.row) throw mismatch(up, `input type mismatch, expect collection, got row`);
          break;
        case "function":
          if (s.grouped) throw mismatch(up, "collection type mismatch, expect non-grouped collection, got grouped collection");
          break;
      }
    }
    let out: Shape = first;
    if (k === "window") out = { row: false, merged: false, grouped: false };
    else if (k === "join") out = { row: false, merged: true, grouped: false };
    else if (k === "groupby" || k === "aggfunc") out = { row: false, merged: first.merged, grouped: true };
    return { in: first, out };
  }

  /**
   * Parses `SELECT <fields> FROM x <rest>`. Every emitter of the graph is a known stream (§4.3):
   * they are listed as joins for the parser, so that `e.c` is column c of emitter e and any other
   * `x.y` is JSON access `x->y`, then dropped.
   */
  private select(fields: string, rest = ""): SelectStatement {
    let known = "";
    for (const e of this.emitters.keys()) known += ` CROSS JOIN \`${e.replace(/`/g, "")}\``;
    const stmt = parseSelect(`SELECT ${fields} FROM graph_node${known} ${rest}`, this.opts.functions);
    stmt.joins = stmt.joins.slice(this.emitters.size);
    const bind = (e: Expr | undefined) =>
      e &&
      walk(e, (x) => {
        if (x.kind === "field" && x.stream !== undefined && this.emitters.has(x.stream)) (x as BoundField).bound = x.stream;
      });
    for (const f of stmt.fields) bind(f.expr);
    bind(stmt.where);
    for (const j of stmt.joins) bind(j.on);
    for (const d of stmt.groupBy) bind(d);
    for (const o of stmt.orderBy) bind(o.expr);
    return stmt;
  }

  private compile(e: Expr, aggregate = false): Evaluator {
    return compileExpr(e, aggregate ? this.aggScope : this.scope);
  }

  private expr(n: NodeDef): string {
    const v = n.props["expr"];
    if (v === undefined) throw new Error("no expr");
    if (typeof v !== "string") throw new Error(`expr ${fmtV(v as Value)} is not string`);
    return v;
  }

  private operator(n: NodeDef, input: Shape, ins: string[]): GraphOpSpec | null {
    const k = n.nodeType.toLowerCase();
    const name = n.name;
    const p = n.props;
    switch (k) {
      case "filter": {
        let cond: Expr;
        try {
          const stmt = this.select("*", `WHERE ${this.expr(n)}`);
          cond = stmt.where!;
        } catch (e) {
          throw wrapProps("filter", n, e);
        }
        // After a grouped flow a filter is a HAVING (§6.4); the check compares the literal text.
        if (input.grouped && n.nodeType === "filter") return { kind: "having", name, cond: this.compile(cond, true) };
        return { kind: "filter", name, cond: this.compile(cond) };
      }
      case "function":
      case "aggfunc": {
        let field: SelectStatement["fields"][number];
        try {
          const expr = this.expr(n);
          field = this.select(expr).fields[0]!;
          if (field.expr.kind !== "call") throw new Error(`expr ${expr} is not ast.Call`);
        } catch (e) {
          throw wrapProps(k, n, e);
        }
        const call = field.expr as Extract<Expr, { kind: "call" }>;
        const aggregate = k === "aggfunc" || (field.alias === undefined && this.opts.functions.kind(call.name) === "aggregate" && !input.row);
        return { kind: "column", name, field: field.name, eval: this.compile(call, aggregate), aggregate };
      }
      case "pick": {
        let stmt: SelectStatement;
        let isAgg: boolean;
        try {
          const fields = propStrings(p, "fields");
          isAgg = propBool(p, "isAgg");
          stmt = this.select(fields.join(","));
        } catch (e) {
          throw wrapProps("pick", n, e);
        }
        return { kind: "pick", name, spec: this.projectSpec(stmt, isAgg || input.grouped) };
      }
      case "window":
        return this.windowOp(n);
      case "watermark": {
        let emitters: string[];
        try {
          emitters = propStrings(p, "emitters");
          if (!emitters.length) throw new Error("watermark must have at least one emitter");
          for (const e of emitters) if (!this.emitters.has(e) || this.emitters.get(e)!.kind !== "stream") throw new Error(`emitter ${e} does not exist`);
        } catch (e) {
          throw wrapProps("watermark", n, e);
        }
        return { kind: "watermark", name, streams: emitters, lateTolerance: this.opts.lateTolerance ?? 1000, markers: propBool(p, "sendWatermark") };
      }
      case "join":
        return this.joinOp(n, ins);
      case "groupby": {
        let dims: Expr[];
        try {
          const list = propStrings(p, "dimensions");
          if (!list.length) throw new Error("groupby must have at least one dimension");
          try {
            dims = this.select("*", `GROUP BY ${list.join(",")}`).groupBy;
          } catch (e) {
            throw new Error(`invalid join statement error: ${errorText(e)}`);
          }
        } catch (e) {
          throw wrapProps("groupby", n, e);
        }
        return { kind: "aggregate", name, dims: dims.map((d) => this.compile(d)) };
      }
      case "orderby": {
        let keys: SortKey[];
        try {
          const sorts = propObjects(p, "sorts", "Sorts");
          if (!sorts.length) throw new Error("order by statement is empty");
          const text = sorts.map((s, i) => `${propString(s, "field", `Sorts[${i}].Field`)}${propBool(s, "desc", `Sorts[${i}].Desc`) ? " DESC" : ""}`).join(",");
          let stmt: SelectStatement;
          try {
            stmt = this.select("*", `ORDER BY ${text}`);
          } catch (e) {
            throw new Error(`invalid order by statement error: ${errorText(e)}`);
          }
          keys = stmt.orderBy.map((o) => ({ eval: this.compile(o.expr, input.grouped), ascending: o.ascending }));
        } catch (e) {
          throw wrapProps("orderby", n, e);
        }
        return { kind: "order", name, keys };
      }
      case "switch": {
        let texts: string[];
        let conds: Expr[];
        try {
          texts = propStrings(p, "cases");
          if (!texts.length) throw new Error("switch node must have at least one case");
          conds = texts.map((c, i) => {
            try {
              return this.select("*", `WHERE ${c}`).where!;
            } catch (e) {
              throw new Error(`parse case ${i} error: ${errorText(e)}`);
            }
          });
        } catch (e) {
          throw wrapProps("switch", n, e);
        }
        const aggregate = !input.row;
        return { kind: "switch", name, cases: conds.map((c) => this.compile(c, aggregate)), texts, stopAtFirstMatch: propBool(p, "stopAtFirstMatch"), aggregate };
      }
    }
    throw fail(`unknown operator type ${n.nodeType}`);
  }

  private windowOp(n: NodeDef): GraphOpSpec {
    const p = n.props;
    let text: string;
    let type: string;
    try {
      type = propString(p, "type").toLowerCase();
      const unit = propString(p, "unit");
      const size = propInt(p, "size");
      let interval = propInt(p, "interval");
      if (size <= 0) throw new Error(`window size ${size} is invalid`);
      switch (type) {
        case "tumblingwindow":
        case "slidingwindow":
          if (interval !== 0 && interval !== size) throw new Error("tumbling window interval must equal to size");
          break;
        case "hoppingwindow":
          if (interval <= 0) throw new Error("hopping window interval must be greater than 0");
          if (interval > size) throw new Error("hopping window interval must be less than size");
          break;
        case "sessionwindow":
          if (interval <= 0) throw new Error("hopping window interval must be greater than 0");
          break;
        case "countwindow":
          if (interval < 0) throw new Error("count window interval must be greater or equal to 0");
          if (interval > size) throw new Error("count window interval must be less than size");
          if (interval === 0) interval = size;
          break;
        default:
          throw new Error(`unknown window type ${propString(p, "type")}`);
      }
      const u = unit.toLowerCase();
      if (type !== "countwindow" && !["dd", "hh", "mi", "ss", "ms"].includes(u)) throw new Error(`Invalid unit ${unit}`);
      text =
        type === "countwindow" ? `countwindow(${size}, ${interval})`
        : type === "hoppingwindow" || type === "sessionwindow" ? `${type}(${u}, ${size}, ${interval})`
        : `${type}(${u}, ${size})`;
    } catch (e) {
      throw wrapProps("window conf", n, e);
    }
    const eventTime = !!this.opts.isEventTime;
    if (eventTime && type === "countwindow") throw wrapProps("window", n, new Error("unsupported window type 5"));
    const stmt = parseSelect(`SELECT * FROM graph_node GROUP BY ${text}`, this.opts.functions);
    const w = extractWindow(stmt.groupBy).window!;
    return { kind: "window", name: n.name, window: w, partition: [], eventTime };
  }

  private joinOp(n: NodeDef, ins: string[]): GraphOpSpec | null {
    const p = n.props;
    let from: string;
    let entries: Props[];
    let stmt: SelectStatement;
    try {
      from = propString(p, "from");
      entries = propObjects(p, "joins", "Joins");
      if (!entries.length) return null;
      const clauses = entries.map((j, i) => {
        const t = propString(j, "type", `Joins[${i}].Type`).toUpperCase();
        return `${t} JOIN ${propString(j, "name", `Joins[${i}].Name`)} ON ${propString(j, "on", `Joins[${i}].On`)}`;
      });
      try {
        stmt = this.select("*", clauses.join(" "));
      } catch (e) {
        if (/CROSS/i.test(clauses.join(" "))) throw new Error("On expression is not required for cross join type.\n");
        throw new Error(`invalid join statement error: ${errorText(e)}`);
      }
      const fromDef = this.emitters.get(from);
      if (!fromDef || fromDef.kind !== "stream") throw new Error(`join source ${from} is not a stream`);
      const lookupIdx = stmt.joins.findIndex((j) => {
        const d = this.emitters.get(j.source.name);
        return !!d && isLookupTable(d);
      });
      if (lookupIdx < 0) {
        const scans = ins.map((i) => this.built.get(i)).filter((b): b is StreamDef => !!b && "kind" in b && (b as StreamDef).kind === "table" && !isLookupTable(b as StreamDef));
        const scanAll = [...this.emitters.values()].filter((d) => d.kind === "table" && !isLookupTable(d));
        const list = scans.length ? scans : scanAll;
        if (list.length) throw new Error(`do not support scan table [${list.map((d) => d.name).join(" ")}] yet`);
        const joins: JoinSpec[] = stmt.joins.map((j, i) => ({ type: j.type, left: i === 0 ? from : "", right: j.source.name, on: j.on ? this.compile(j.on) : undefined }));
        return { kind: "join", name: n.name, joins };
      }
      if (lookupIdx !== stmt.joins.length - 1) throw new Error("only support to join one lookup table with one stream");
      const j = stmt.joins[lookupIdx]!;
      const table = this.emitters.get(j.source.name)!;
      const fields: string[] = [];
      const values: Evaluator[] = [];
      for (const c of conjuncts(j.on)) {
        if (c.kind !== "binary" || c.op !== "=") continue;
        const side = (a: Expr, b: Expr) => {
          if (a.kind === "field" && (a as BoundField).bound === table.name) {
            fields.push(a.name);
            values.push(this.compile(b));
            return true;
          }
          return false;
        };
        if (!side(c.left, c.right)) side(c.right, c.left);
      }
      if (!fields.length) throw new Error(`join condition ${j.on ? renderExpr(j.on) : ""} is invalid, at least one equi-join predicate is required`);
      return { kind: "lookup", name: table.name, spec: { table, type: j.type === "LEFT" ? "LEFT" : "INNER", fields, values } };
    } catch (e) {
      throw wrapProps("join", n, e);
    }
  }

  private projectSpec(stmt: SelectStatement, aggregate: boolean): ProjectSpec {
    return projectSpecOf(stmt, (e, agg) => this.compile(e, agg), aggregate, this.opts);
  }
}

const OPERATORS = new Set(["filter", "function", "aggfunc", "pick", "window", "watermark", "join", "groupby", "orderby", "switch"]);

