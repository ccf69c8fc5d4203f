/**
 * The `sql` sink (rules-and-sinks.md §12, eKuiper's sql extension): writes each row into `table`
 * of the database of `dburl`, columns = `fields` or the row's keys, values as parameters. Without
 * `rowkindField` the rows of an item go in one multi-row INSERT; with it each row's kind
 * (`insert` when absent, `update`, `delete`, `upsert`) picks INSERT, UPDATE … WHERE keyField = ?,
 * DELETE … WHERE keyField = ?, or an UPDATE followed by an INSERT when it matched no row — the
 * rows of one item in one transaction. An unreachable database is an IoError (retried with
 * `resendInterval`/the cache); a failing statement drops the item. A tuple sink.
 */
import { EngineError, errorText, IoError } from "../../errors.ts";
import { fmtV, isObj, type Obj } from "../../value/values.ts";
import { PropReader, type Props } from "../../config/props.ts";
import { dbUrlProp, parseDbUrl, sqlIdent, SqlDb, toParam } from "./db.ts";
import type { SinkConnector, SinkContext, SinkItem } from "../../sink/connector.ts";
import type { ConnectionReporter } from "../../core/connection.ts";

const KINDS = new Set(["insert", "update", "delete", "upsert"]);
/** Parameters per statement stay under SQLite's limit (32766; PostgreSQL and MySQL allow 65535). */
const MAX_PARAMS = 30_000;

type Run = (text: string, params: unknown[]) => Promise<{ affectedRows?: number }>;

export class SqlSink implements SinkConnector {
  readonly bytes = false;
  private readonly db: SqlDb;
  private readonly table: string;
  private readonly fields: string[] | undefined;
  private readonly rowkindField: string;
  private readonly keyField: string;
  private status: ConnectionReporter | undefined;

  constructor(props: Props) {
    const r = new PropReader(props);
    this.db = new SqlDb(parseDbUrl(dbUrlProp(props)), "sql sink");
    const table = r.str("table");
    if (!table) throw new EngineError("property table is required");
    this.table = sqlIdent(this.db.dialect, table, true);
    const fields = r.strList("fields");
    this.fields = fields && fields.length > 0 ? fields : undefined;
    this.rowkindField = r.str("rowkindField");
    this.keyField = r.str("keyField");
    if (this.rowkindField && !this.keyField) throw new EngineError("keyField is required when rowkindField is set");
  }

  async open(ctx: SinkContext): Promise<void> {
    this.status = ctx.status;
    ctx.status.connecting();
    // One attempt: when the database is down the items fail with IoError and the sink's retry
    // and cache (rules-and-sinks.md §3.4) take over.
    try {
      await this.db.query("SELECT 1");
      ctx.status.connected();
    } catch (e) {
      ctx.status.disconnected(errorText(e));
    }
  }

  async send(item: SinkItem): Promise<void> {
    const p = item.payload;
    const rows = Array.isArray(p) ? (p as Obj[]) : isObj(p as Obj) ? [p as Obj] : [];
    if (rows.length === 0) return;
    try {
      if (!this.rowkindField) await this.insert(rows, (t, ps) => this.db.query(t, ps));
      else if (rows.length === 1) await this.save(rows[0]!, (t, ps) => this.db.query(t, ps));
      else
        await this.db.transaction(async (run) => {
          for (const row of rows) await this.save(row, run);
        });
    } catch (e) {
      if (e instanceof IoError && this.status && this.status.status !== -1) this.status.disconnected(e.message);
      throw e;
    }
    if (this.status && this.status.status !== 1) this.status.connected();
  }

  /**
   * The columns written for `rows`: `fields`, else every key in first-seen order. The rowkind field is a
   * column like any other: eKuiper writes it (a table with that column `NOT NULL` needs it).
   */
  private columns(rows: Obj[]): string[] {
    if (this.fields) return this.fields;
    const seen = new Set<string>();
    for (const r of rows) for (const k in r) seen.add(k);
    return [...seen];
  }

  private async insert(rows: Obj[], run: Run): Promise<void> {
    const cols = this.columns(rows);
    if (cols.length === 0) throw new EngineError(`sql sink: no column to insert in data ${fmtV(rows.length === 1 ? rows[0]! : rows)}`);
    const d = this.db.dialect;
    const head = `INSERT INTO ${this.table} (${cols.map((c) => sqlIdent(d, c)).join(",")}) VALUES `;
    const per = Math.max(1, Math.floor(MAX_PARAMS / cols.length));
    for (let from = 0; from < rows.length; from += per) {
      const params: unknown[] = [];
      const tuples: string[] = [];
      for (const row of rows.slice(from, from + per)) {
        const ph: string[] = [];
        for (const c of cols) {
          params.push(toParam(row[c]));
          ph.push(this.db.param(params.length));
        }
        tuples.push(`(${ph.join(",")})`);
      }
      await run(head + tuples.join(","), params);
    }
  }

  private async save(row: Obj, run: Run): Promise<void> {
    const kind = row[this.rowkindField];
    if (kind !== undefined && kind !== null && typeof kind !== "string") throw new EngineError(`rowkind field ${this.rowkindField} is not a string in data ${fmtV(row)}`);
    const k = kind ?? "insert";
    if (!KINDS.has(k)) throw new EngineError(`invalid rowkind ${k}`);
    if (k === "insert") return this.insert([row], run);
    const key = row[this.keyField];
    if (key === undefined || key === null) throw new EngineError(`key field ${this.keyField} not found in data ${fmtV(row)}`);
    const d = this.db.dialect;
    const where = ` WHERE ${sqlIdent(d, this.keyField)} = `;
    if (k === "delete") {
      await run(`DELETE FROM ${this.table}${where}${this.db.param(1)}`, [toParam(key)]);
      return;
    }
    const cols = this.columns([row]).filter((c) => c !== this.keyField);
    if (cols.length > 0) {
      const params: unknown[] = [];
      const sets: string[] = [];
      for (const c of cols) {
        params.push(toParam(row[c]));
        sets.push(`${sqlIdent(d, c)}=${this.db.param(params.length)}`);
      }
      params.push(toParam(key));
      const res = await run(`UPDATE ${this.table} SET ${sets.join(",")}${where}${this.db.param(params.length)}`, params);
      if (k === "update" || (res.affectedRows ?? 0) > 0) return;
    } else if (k === "update") return;
    else {
      const res = await run(`SELECT 1 FROM ${this.table}${where}${this.db.param(1)}`, [toParam(key)]);
      if ((res as unknown[]).length > 0) return;
    }
    // upsert of a key not in the table
    await this.insert([row], run);
  }

  async close(): Promise<void> {
    await this.db.close();
  }
}
