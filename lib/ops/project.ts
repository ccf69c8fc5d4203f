/**
 * SELECT (`<n>_project`, sql §10.1): builds one output object per row (or per group in an
 * aggregate query) and emits one Emission per input item. LIMIT truncates collections.
 *
 * A large collection is projected across event-loop turns (Operator.spreadRows): the emission is still
 * one, made when the last row is projected, and a failing row still fails the whole collection;
 * only the time is spread (a window of 10,000 groups stalled the loop for 36–39 ms under load).
 */
import { RowError } from "../errors.ts";
import { GroupRow, Tuple, type EvalCtx, type Row } from "../expr/row.ts";
import { compareUtf8, isObj, type Obj, type Value } from "../value/values.ts";
import { Collection, Emission, type Item } from "../core/item.ts";
import { Operator, type OpEnv } from "../core/operator.ts";
import type { ProjectField, ProjectSpec } from "../plan/specs.ts";

/** No value for this output key (omitted null, invisible field). */
const ABSENT = Symbol("absent");


export class ProjectOp extends Operator {
  private readonly spec: ProjectSpec;
  private readonly ctx: EvalCtx = { window: null };
  /**
   * With a fixed set of output keys (no `*`, no changed_cols, no __meta), rows are built with their
   * keys in byte order: the JSON encoder then takes its native fast path. Evaluation order is
   * unchanged; values wait in `scratch` (columns, then exprs, then aliases) until assembly.
   */
  private readonly sorted: { name: string; slot: number }[] | null;
  private readonly scratch: (Value | typeof ABSENT)[];
  /** Builds the sorted row from `scratch` when no value is absent (see `assembler`); null: the loop does. */
  private readonly assemble: Assemble | null;

  constructor(name: string, env: OpEnv, spec: ProjectSpec) {
    super(name, env, "run Select error: ");
    this.spec = spec;
    const names = [...spec.columns.map((c) => c.name), ...spec.exprs.map((f) => f.name), ...spec.aliases.map((f) => f.name)];
    const fixed = !spec.wildcard && !spec.sendMeta && !spec.exprs.some((f) => f.multi) && new Set(names).size === names.length;
    this.sorted = fixed ? names.map((n, slot) => ({ name: n, slot })).sort((a, b) => compareUtf8(a.name, b.name)) : null;
    this.scratch = new Array(names.length);
    this.assemble = this.sorted ? assembler(this.sorted) : null;
  }

  protected process(item: Item): void {
    const spec = this.spec;
    if (item instanceof Tuple) {
      this.ctx.window = null;
      this.metrics.messagesProcessed++;
      if (spec.limit === 0) return;
      this.emit(Emission.one(this.projectRow(item), item.meta));
      return;
    }
    if (!(item instanceof Collection)) return;
    this.metrics.messagesProcessed += item.rows.length;
    if (spec.limit === 0) return;
    const rows = this.rowsOf(item);
    const out: Obj[] = new Array(rows.length);
    const meta = rows.length ? rows[0]!.metadata(undefined) : null;
    this.ctx.window = item.window;
    this.spreadRows(
      item.ownership,
      rows.length,
      (i) => (out[i] = this.projectRow(rows[i]!)),
      () => this.emit(new Emission(out, meta)),
    );
  }

  /** The rows a collection projects: its groups in an aggregate query, else its rows; LIMIT applied. */
  private rowsOf(item: Collection): Row[] {
    const spec = this.spec;
    let rows: Row[];
    if (spec.aggregate) rows = item.groups ?? [new GroupRow(item.rows, item.window ? item.window.trigger : 0)];
    // Groups that survived HAVING in a non-aggregate query are projected row by row (sql §11.1).
    else rows = item.groups ? item.groups.flatMap((g) => g.rows) : item.rows;
    return spec.limit !== undefined && spec.limit > 0 ? rows.slice(0, spec.limit) : rows;
  }

  private projectRow(row: Row): Obj {
    return this.sorted ? this.projectSorted(row, this.sorted) : this.projectAny(row);
  }

  private projectSorted(row: Row, sorted: { name: string; slot: number }[]): Obj {
    const spec = this.spec;
    const ctx = this.ctx;
    const vals = this.scratch;
    const cols = spec.columns;
    const nc = cols.length;
    for (let i = 0; i < nc; i++) {
      const c = cols[i]!;
      const v = spec.ignoreCase ? row.valueFold(c.column, c.stream) : row.value(c.column, c.stream);
      vals[i] = v !== null || spec.sendNil || hasKey(row, c.column, c.stream) ? v : ABSENT;
    }
    let f: ProjectField | undefined;
    let slot = nc;
    try {
      for (f of spec.exprs) {
        const v = f.invisible ? null : f.eval(row, ctx);
        vals[slot++] = v === null ? ABSENT : v;
      }
      for (f of spec.aliases) {
        const v: Value = f.eval(row, ctx);
        vals[slot++] = f.invisible || (v === null && !spec.sendNil) ? ABSENT : v;
      }
    } catch (e) {
      if (e instanceof RowError && f) throw new RowError(`run Select error: ${f.errorContext} meet error, err:${e.message}`);
      throw e;
    }
    if (this.assemble !== null) {
      const full = this.assemble(vals, ABSENT);
      if (full !== null) return full;
    }
    const out: Obj = {};
    for (let i = 0; i < sorted.length; i++) {
      const k = sorted[i]!;
      const v = vals[k.slot]!;
      if (v !== ABSENT) out[k.name] = v;
    }
    return out;
  }

  private projectAny(row: Row): Obj {
    const spec = this.spec;
    const ctx = this.ctx;
    const out: Obj = {};
    if (spec.wildcard) {
      const cols = row.columns(spec.wildcard.stream);
      const except = spec.wildcard.except;
      for (const k in cols) if (!except.has(k) && k.charCodeAt(0) !== 36) out[k] = cols[k]!;
    }
    for (const c of spec.columns) {
      const v = spec.ignoreCase ? row.valueFold(c.column, c.stream) : row.value(c.column, c.stream);
      if (v !== null || spec.sendNil || hasKey(row, c.column, c.stream)) out[c.name] = v;
    }
    let f: ProjectField | undefined;
    try {
      for (f of spec.exprs) {
        if (f.invisible) continue;
        const v = f.eval(row, ctx);
        if (v === null) continue;
        if (f.multi && isObj(v)) Object.assign(out, v);
        else out[f.name] = v;
      }
      for (f of spec.aliases) {
        const v: Value = f.eval(row, ctx);
        if (f.invisible) continue;
        if (v !== null || spec.sendNil) out[f.name] = v;
      }
    } catch (e) {
      if (e instanceof RowError && f) throw new RowError(`run Select error: ${f.errorContext} meet error, err:${e.message}`);
      throw e;
    }
    if (spec.sendMeta) out.__meta = row.metadata(undefined);
    return out;
  }

  protected override fail(e: RowError): void {
    // Field errors arrive already prefixed with their field context.
    super.fail(e.message.startsWith("run Select error: ") ? e : new RowError("run Select error: " + e.message), true);
  }
}

type Assemble = (vals: (Value | typeof ABSENT)[], absent: typeof ABSENT) => Obj | null;

/** Rows with more keys than this are assembled by the loop. */
const MAX_ASSEMBLED_KEYS = 32;

/**
 * An object literal with the sorted keys, made once per rule: it allocates the row in its final
 * layout, where a store per key with a different key each time takes the runtime's generic path
 * (ProjectOp alone over W1 rows: 39–41 against 45–48 ms per 500k rows). Null when a key would not be a
 * plain own key in a literal (`__proto__` sets the prototype).
 */
function assembler(sorted: { name: string; slot: number }[]): Assemble | null {
  if (sorted.length === 0 || sorted.length > MAX_ASSEMBLED_KEYS || sorted.some((k) => k.name === "__proto__")) return null;
  const reads = sorted.map((k, i) => `const v${i} = vals[${k.slot}];`).join("\n");
  const absent = sorted.map((_, i) => `v${i} === absent`).join(" || ");
  const members = sorted.map((k, i) => `${JSON.stringify(k.name)}: v${i}`).join(", ");
  return new Function("vals", "absent", `${reads}\nif (${absent}) return null;\nreturn { ${members} };`) as Assemble;
}

/** Whether the row has the key at all (a present null is copied, sql §10.1 step 3). */
function hasKey(row: Row, column: string, stream: string | undefined): boolean {
  if (row instanceof Tuple) return (stream === undefined || stream === row.emitter) && column in row.data;
  const all = row.columns(stream);
  return column in all;
}
