/**
 * The `sql` source (rules-and-sinks.md §12, eKuiper's sql extension): queries the database of
 * `dburl` at start and then every `interval`, each result row one message. The query is
 * `internalSqlQueryCfg` (`SELECT * FROM table [WHERE idx > ? …] [ORDER BY idx ASC …] [LIMIT n]`,
 * index values as parameters) or `templateSqlQueryCfg` (a Go template rendered with the index
 * values). With index fields the source remembers each field's value in the last row it read, so
 * the next query only fetches newer rows; those values are its rewindable offset (`$$offset`).
 * Failures are source exceptions and the rule keeps running; an unreachable database shows as
 * disconnected until a query succeeds again.
 */
import { EngineError, errorText, IoError } from "../../errors.ts";
import { DateTime, formatPattern } from "../../value/time.ts";
import { isObj, type Obj, type Value } from "../../value/values.ts";
import { PropReader, type Props } from "../../config/props.ts";
import { dbUrlProp, parseDbUrl, sqlIdent, SqlDb, toFloeRows, toParam } from "./db.ts";
import { compileTemplate, type CompiledTemplate } from "../../template/index.ts";
import { SourceMessage } from "../../source/message.ts";
import type { SourceConnector, SourceContext } from "../../source/connector.ts";

interface IndexField {
  readonly name: string;
  /** The last value read, or the configured `indexValue`; undefined: no condition yet. */
  value: Value | undefined;
  /** `DATETIME` with a `dateTimeFormat`: a datetime value is compared as that formatted text. */
  readonly format: string;
}

/** The offset history kept for `offset(unconsumed)`: at most this many messages back. */
const HISTORY = 16_384;

function indexFields(cfg: PropReader, where: string): IndexField[] {
  const one = (r: PropReader): IndexField => {
    const name = r.str("indexField");
    if (!name) throw new EngineError(`${where}.indexFields: indexField should be set`);
    const v = r.raw("indexValue");
    const type = r.str("indexFieldType").toUpperCase();
    return { name, value: v === undefined || v === null || v === "" ? undefined : (v as Value), format: type === "DATETIME" ? r.str("dateTimeFormat") : "" };
  };
  const out: IndexField[] = [];
  if (cfg.str("indexField")) out.push(one(cfg));
  const list = cfg.raw("indexFields");
  if (list !== undefined && list !== null) {
    if (!Array.isArray(list) || !list.every((x) => isObj(x as Value))) throw new EngineError(`${where}.indexFields should be an array of objects`);
    for (const x of list) out.push(one(new PropReader(x as Props)));
  }
  return out;
}

export class SqlSource implements SourceConnector {
  private readonly db: SqlDb;
  private readonly intervalMs: number;
  private readonly index: IndexField[];
  /** internalSqlQueryCfg: the statement before WHERE and after it; templateSqlQueryCfg: the template. */
  private readonly table: string;
  private readonly limit: number;
  private readonly template: CompiledTemplate | undefined;
  /** Index values after each message published, oldest first, and the values before the first. */
  private marks: Obj[] = [];
  private base: Obj;
  private timer: ReturnType<typeof setInterval> | undefined;
  private busy = false;
  private closed = false;

  constructor(props: Props) {
    const r = new PropReader(props);
    this.db = new SqlDb(parseDbUrl(dbUrlProp(props)), "sql source");
    this.intervalMs = r.duration("interval", 10_000);
    if (this.intervalMs < 0) throw new EngineError("interval should be greater than or equal to 0");
    const tpl = r.obj("templateSqlQueryCfg");
    const internal = r.obj("internalSqlQueryCfg");
    const tplReader = tpl ? new PropReader(tpl) : undefined;
    const templateSql = tplReader?.str("templateSql") ?? "";
    if (templateSql) {
      try {
        this.template = compileTemplate(templateSql, {}, "sql");
      } catch (e) {
        throw new EngineError(`templateSqlQueryCfg.templateSql: ${errorText(e)}`, undefined, { cause: e });
      }
      this.index = indexFields(tplReader!, "templateSqlQueryCfg");
      this.table = "";
      this.limit = 0;
    } else {
      const ir = new PropReader(internal ?? {});
      // The stream's DATASOURCE names the table when internalSqlQueryCfg does not.
      this.table = ir.str("table") || r.str("datasource");
      if (!this.table) throw new EngineError("one of templateSqlQueryCfg.templateSql and internalSqlQueryCfg.table should be set");
      this.limit = ir.int("limit", 0);
      if (this.limit < 0) throw new EngineError("internalSqlQueryCfg.limit should be greater than or equal to 0");
      this.index = indexFields(ir, "internalSqlQueryCfg");
      this.template = undefined;
    }
    this.base = this.values();
  }

  /** `$$offset`: the index values of the last row the rule consumed (`{field: value}`). */
  offset(unconsumed: number): unknown {
    const m = this.marks;
    if (unconsumed <= 0) return m.length > 0 ? { ...m[m.length - 1]! } : { ...this.base };
    return unconsumed >= m.length ? { ...this.base } : { ...m[m.length - 1 - unconsumed]! };
  }

  /** Resumes after a saved `offset()` (or reset_state's `{"<indexField>": value}`). */
  rewind(state: unknown): void {
    if (!isObj(state as Value)) throw new EngineError("invalid sql source offset: expect an object of index field values");
    const s = state as Obj;
    for (const f of this.index) if (s[f.name] !== undefined) f.value = s[f.name];
    this.base = this.values();
    this.marks = [];
  }

  open(ctx: SourceContext): void {
    ctx.status.connecting();
    void this.pull(ctx);
    if (this.intervalMs > 0) this.timer = setInterval(() => void this.pull(ctx), this.intervalMs);
  }

  private values(): Obj {
    const o: Obj = {};
    for (const f of this.index) if (f.value !== undefined) o[f.name] = f.value;
    return o;
  }

  private indexValue(f: IndexField): Value {
    const v = f.value!;
    return f.format && v instanceof DateTime ? formatPattern(v, f.format) : v;
  }

  /** The statement of the next pull and its parameters. */
  private statement(): [string, unknown[]] {
    if (this.template) {
      const data: Obj = {};
      for (const f of this.index) data[f.name] = f.value === undefined ? null : this.indexValue(f);
      return [this.template(data), []];
    }
    const d = this.db.dialect;
    const conds: string[] = [];
    const params: unknown[] = [];
    for (const f of this.index) {
      if (f.value === undefined) continue;
      params.push(toParam(this.indexValue(f)));
      conds.push(`${sqlIdent(d, f.name)} > ${this.db.param(params.length)}`);
    }
    let text = `SELECT * FROM ${sqlIdent(d, this.table, true)}`;
    if (conds.length > 0) text += ` WHERE ${conds.join(" AND ")}`;
    if (this.index.length > 0) text += ` ORDER BY ${this.index.map((f) => `${sqlIdent(d, f.name)} ASC`).join(", ")}`;
    if (this.limit > 0) text += ` LIMIT ${this.limit}`;
    return [text, params];
  }

  private async pull(ctx: SourceContext): Promise<void> {
    if (this.busy || this.closed) return;
    this.busy = true;
    try {
      const [text, params] = this.statement();
      const rows = toFloeRows(this.db.dialect, await this.db.query(text, params));
      if (this.closed) return;
      if (ctx.status.status !== 1) ctx.status.connected();
      if (rows.length === 0) return;
      const batch: SourceMessage[] = new Array(rows.length);
      const marks: Obj[] = new Array(rows.length);
      for (let i = 0; i < rows.length; i++) {
        const row = rows[i]!;
        // eKuiper takes each index field from every row read: the last row's values remain.
        for (const f of this.index) if (row[f.name] !== undefined) f.value = row[f.name];
        batch[i] = new SourceMessage(null, row, null);
        marks[i] = this.values();
      }
      const bus = ctx.bus;
      while (!bus.publish(batch)) {
        await new Promise<void>((r) => bus.onDrain(r));
        if (this.closed) return;
      }
      this.remember(marks);
    } catch (e) {
      if (this.closed) return;
      if (e instanceof IoError) ctx.status.disconnected(errorText(e));
      ctx.exception(errorText(e));
    } finally {
      this.busy = false;
    }
  }

  private remember(marks: Obj[]): void {
    const m = this.marks;
    for (const x of marks) m.push(x);
    if (m.length > HISTORY) {
      const drop = m.length - HISTORY;
      this.base = m[drop - 1]!;
      this.marks = m.slice(drop);
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearInterval(this.timer);
    await this.db.close();
  }
}
