/**
 * Operator nodes of a graph rule (graph-rules.md §6): each node's props parsed by the SQL
 * parser with eKuiper's messages, planned into the operator specs the SQL planner builds, plus
 * the operators only graphs have. Every expression is compiled once, here.
 */
import { errorText } from "../errors.ts";
import { compileExpr, type Evaluator, type Scope } from "../expr/compile.ts";
import type { Expr, SelectStatement } from "../sql/ast.ts";
import { parseSelect } from "../sql/parse.ts";
import { renderExpr, type BoundField } from "../sql/render.ts";
import { walk } from "../sql/walk.ts";
import { fmtV, type Value } from "../value/values.ts";
import { fail, wrapProps, type NodeDef } from "./graph-doc.ts";
import { propBool, propInt, propObjects, propString, propStrings, type Props } from "./graph-props.ts";
import type { Shape } from "./graph-shape.ts";
import { conjuncts } from "./lookup.ts";
import type { PlanOptions } from "./plan.ts";
import { projectSpecOf } from "./project-spec.ts";
import type { JoinSpec, OpSpec, ProjectSpec, SortKey } from "./specs.ts";
import { isLookupTable, type StreamDef } from "./streams.ts";
import { extractWindow } from "./window-spec.ts";

/** Operators only graphs have (switch, function/aggfunc columns, pick that keeps flowing). */
export type GraphOpSpec =
  | OpSpec
  | { kind: "switch"; name: string; cases: Evaluator[]; texts: string[]; stopAtFirstMatch: boolean; aggregate: boolean }
  | { kind: "column"; name: string; field: string; eval: Evaluator; aggregate: boolean }
  | { kind: "pick"; name: string; spec: ProjectSpec };

/** The operator node types (`nodeType`, case-insensitive). */
export const OPERATORS = new Set(["filter", "function", "aggfunc", "pick", "window", "watermark", "join", "groupby", "orderby", "switch"]);

/** Plans the operator nodes of one graph; one compile scope for all of them. */
export class GraphOperators {
  private readonly scope: Scope;
  private readonly aggScope: Scope;

  /**
   * `emitters`: emitter names (streams and tables) → their definitions; `built`: graph node
   * name → what a source or sink node planned to. Both fill as the graph plans.
   */
  constructor(
    private readonly opts: PlanOptions,
    private readonly emitters: ReadonlyMap<string, StreamDef>,
    private readonly built: ReadonlyMap<string, object>,
  ) {
    const callState = new Map<Expr, { state: unknown }>();
    this.scope = { env: opts.env, functions: opts.functions, aggregate: false, cachedCalls: new Map(), callState, hits: { row: undefined, agg: undefined }, ignoreCase: opts.ignoreCase };
    this.aggScope = { ...this.scope, aggregate: true };
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

  /** The spec of operator node `n` with input shape `input` from nodes `ins`; null for a join with no joins. */
  operator(n: NodeDef, input: Shape, ins: string[]): GraphOpSpec | null {
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
