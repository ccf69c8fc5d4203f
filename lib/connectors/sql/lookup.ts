/**
 * The `sql` lookup table (rules-and-sinks.md §12, sql.md §12.5): DATASOURCE names the table of
 * the database of `dburl`; each lookup runs `SELECT * FROM <table> WHERE k1 = ? AND …` with the
 * key values as parameters and returns the matching rows (integers as int64, sql-db.ts).
 */
import { EngineError } from "../../errors.ts";
import type { Obj, Value } from "../../value/values.ts";
import { PropReader, type Props } from "../../config/props.ts";
import { dbUrlProp, parseDbUrl, sqlIdent, SqlDb, toFloeRows, toParam } from "./db.ts";
import type { LookupSource } from "../../lookup/table.ts";

export class SqlLookup implements LookupSource {
  private readonly db: SqlDb;
  private readonly table: string;
  /** Statement text per key list (`a,b`): built once per distinct ON clause. */
  private readonly texts = new Map<string, string>();

  constructor(props: Props) {
    const r = new PropReader(props);
    this.db = new SqlDb(parseDbUrl(dbUrlProp(props)), "sql lookup");
    const table = r.str("datasource");
    if (!table) throw new EngineError("datasource(table) is required for sql lookup table");
    this.table = sqlIdent(this.db.dialect, table, true);
  }

  /** Connects once, so that a wrong dburl or an unreachable database fails the rule's start. */
  async open(): Promise<void> {
    await this.db.query("SELECT 1");
  }

  async lookup(keys: readonly string[], values: readonly Value[]): Promise<Obj[]> {
    const id = keys.join("\u0000");
    let text = this.texts.get(id);
    if (text === undefined) {
      const d = this.db.dialect;
      text = `SELECT * FROM ${this.table} WHERE ${keys.map((k, i) => `${sqlIdent(d, k)} = ${this.db.param(i + 1)}`).join(" AND ")}`;
      this.texts.set(id, text);
    }
    const params = new Array<unknown>(values.length);
    for (let i = 0; i < values.length; i++) params[i] = toParam(values[i]);
    return toFloeRows(this.db.dialect, await this.db.query(text, params));
  }

  async close(): Promise<void> {
    await this.db.close();
  }
}
