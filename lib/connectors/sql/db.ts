/**
 * What the `sql` source, sink and lookup share (rules-and-sinks.md §12): the `dburl` (legacy
 * `url`) parsed into a driver of Bun's built-in SQL client (PostgreSQL, MySQL/MariaDB, SQLite),
 * a connection that is recreated after a connection-type failure, rows converted to floe values,
 * identifiers that are used bare when plain (like eKuiper) and quoted otherwise, and the
 * placeholder syntax of the dialect. Values always travel as parameters, never in the SQL text.
 */
import type { SQL } from "bun";
import { EngineError, IoError } from "../../errors.ts";
import { DateTime, UTC } from "../../value/time.ts";
import { isObj, type Obj, type Value } from "../../value/values.ts";
import { openSql } from "../../net/brokers.ts";
import { PropReader, type Props } from "../../config/props.ts";

export type SqlDialect = "postgres" | "mysql" | "sqlite";

export interface DbUrl {
  readonly dialect: SqlDialect;
  /** The options given to `new SQL`: a server URL, or a SQLite file name. */
  readonly options: SQL.Options;
  /** The URL with its password masked, for messages. */
  readonly display: string;
}

const SCHEMES: Record<string, SqlDialect | "mariadb"> = {
  postgres: "postgres",
  postgresql: "postgres",
  pg: "postgres",
  pgsql: "postgres",
  mysql: "mysql",
  my: "mysql",
  mariadb: "mariadb",
  maria: "mariadb",
  sqlite: "sqlite",
  sqlite3: "sqlite",
  sq: "sqlite",
  file: "sqlite",
};

/** `dburl` (or the legacy `url`) of a sql connector's properties; `dburl should be set` without either. */
export function dbUrlProp(props: Props): string {
  const r = new PropReader(props);
  const url = r.str("dburl") || r.str("url");
  if (!url) throw new EngineError("dburl should be set");
  return url;
}

/**
 * Parses a driver URL the way eKuiper's dburl does for the drivers floe has: `postgres://…`,
 * `mysql://user:pw@host:3306/db` (Go driver options such as `parseTime` are dropped), and
 * `sqlite:/abs/path.db`, `sqlite:///abs/path.db`, `sqlite://rel/path.db`, `sqlite:rel.db`,
 * `sqlite::memory:`.
 */
export function parseDbUrl(url: string): DbUrl {
  const m = /^([A-Za-z][A-Za-z0-9+.-]*):(.*)$/s.exec(url);
  if (!m) throw new EngineError(`invalid dburl ${maskUrl(url)}: missing database scheme`);
  const scheme = m[1]!.toLowerCase();
  const kind = SCHEMES[scheme];
  if (!kind) throw new EngineError(`unknown database scheme ${scheme} in dburl, supported: postgres, mysql, mariadb, sqlite`);
  if (kind === "sqlite") {
    let rest = m[2]!;
    if (rest.startsWith("//")) rest = rest.slice(2);
    const q = rest.indexOf("?");
    const path = decodeURIComponent(q >= 0 ? rest.slice(0, q) : rest);
    if (!path) throw new EngineError(`invalid dburl ${url}: missing database file`);
    const mode = q >= 0 ? new URLSearchParams(rest.slice(q + 1)).get("mode") : null;
    const filename = path + (mode ? `?mode=${mode}` : "");
    return { dialect: "sqlite", options: { adapter: "sqlite", filename, bigint: true }, display: url };
  }
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new EngineError(`invalid dburl ${maskUrl(url)}`);
  }
  if (!u.hostname) throw new EngineError(`invalid dburl ${maskUrl(url)}: missing host`);
  const adapter = kind === "mariadb" ? "mariadb" : kind;
  if (adapter !== "postgres") {
    // Options of Go's MySQL driver that Bun's client does not take.
    for (const k of ["parseTime", "loc", "charset", "collation", "timeout", "readTimeout", "writeTimeout", "multiStatements", "interpolateParams"]) u.searchParams.delete(k);
  }
  u.protocol = adapter === "postgres" ? "postgres:" : "mysql:";
  return {
    dialect: adapter === "postgres" ? "postgres" : "mysql",
    // foundRows: an UPDATE that matched a row reports it even when no value changed (sink upsert).
    options: adapter === "postgres" ? { url: u.toString(), adapter, bigint: true, max: 1, connectionTimeout: 10 } : { url: u.toString(), adapter, bigint: true, max: 1, connectionTimeout: 10, foundRows: true },
    display: maskUrl(url),
  };
}

function maskUrl(url: string): string {
  return url.replace(/(\/\/[^:/@]*:)[^@/]*@/, "$1******@");
}

/** Whether a driver error means the database is unreachable (retry), not that the statement failed. */
export function isConnectionError(e: unknown): boolean {
  const code = typeof e === "object" && e !== null && "code" in e ? String((e as { code: unknown }).code) : "";
  if (/CONNECTION|TIMEOUT|TLS|AUTHENTICATION|^E(CONN|HOST|NET|PIPE|TIMEDOUT|ADDR)/.test(code)) return true;
  if (/^SQLITE_(CANTOPEN|BUSY|LOCKED|READONLY|IOERR|FULL|PERM)/.test(code)) return true;
  const msg = e instanceof Error ? e.message : String(e);
  return code === "" && /connect|connection|closed|refused|timed? ?out/i.test(msg);
}

/**
 * One connection to the database of a `dburl`, created lazily and dropped after a
 * connection-type failure so that the next query reconnects (Bun's SQLite adapter does not
 * reopen a file by itself). Failures come out as IoError (unreachable) or EngineError (the
 * statement), prefixed with `what`.
 */
export class SqlDb {
  readonly dialect: SqlDialect;
  private client: SQL | undefined;
  private closed = false;

  constructor(
    readonly url: DbUrl,
    private readonly what: string,
  ) {
    this.dialect = url.dialect;
  }

  /** `$1`, `$2`… on PostgreSQL, `?` elsewhere (1-based `n`). */
  param(n: number): string {
    return this.dialect === "postgres" ? `$${n}` : "?";
  }

  /** Runs one statement with parameters; resolves to the result rows (driver values). */
  async query(text: string, params: unknown[] = []): Promise<Record<string, unknown>[] & { columns?: SQL.ResultColumn[] | null; affectedRows?: number }> {
    const c = this.connection();
    try {
      return await c.unsafe(text, params);
    } catch (e) {
      throw this.fail(e, c);
    }
  }

  /** Runs `fn` in a transaction (all or nothing, so a retried item is not half-written). */
  async transaction(fn: (run: (text: string, params: unknown[]) => Promise<{ affectedRows?: number }>) => Promise<void>): Promise<void> {
    const c = this.connection();
    try {
      await c.begin(async (tx) => {
        await fn((text, params) => tx.unsafe(text, params));
      });
    } catch (e) {
      throw this.fail(e, c);
    }
  }

  private connection(): SQL {
    if (this.closed) throw new IoError(`${this.what}: connection closed`);
    if (!this.client) this.client = openSql(this.url.options);
    return this.client;
  }

  private fail(e: unknown, c: SQL): EngineError {
    if (e instanceof EngineError) return e;
    const msg = e instanceof Error ? e.message : String(e);
    if (!isConnectionError(e)) return new EngineError(`${this.what}: ${msg}`, undefined, { cause: e });
    if (this.client === c) {
      this.client = undefined;
      void c.close({ timeout: 0 }).catch(() => {});
    }
    return new IoError(`${this.what}: ${msg}`, { cause: e });
  }

  async close(): Promise<void> {
    this.closed = true;
    const c = this.client;
    this.client = undefined;
    await c?.close({ timeout: 0 }).catch(() => {});
  }
}

// PostgreSQL OIDs and MySQL protocol type codes of integer columns.
const PG_INT = new Set([20, 21, 23, 26]);
const MYSQL_INT = new Set([1, 2, 3, 8, 9, 13]);

/**
 * Driver rows → floe rows: integer columns as int64 (bigint; SQLite gives every INTEGER value as
 * bigint, PostgreSQL int8 as bigint and int2/int4 as numbers), floats as numbers, timestamps as
 * datetimes in UTC (Go's `time.Time`, RFC 3339 in JSON), bytes as bytes, NULL as null.
 */
export function toFloeRows(dialect: SqlDialect, rows: Record<string, unknown>[] & { columns?: SQL.ResultColumn[] | null }): Obj[] {
  let ints: Set<string> | undefined;
  const cols = rows.columns;
  if (cols && dialect !== "sqlite") {
    const set = dialect === "postgres" ? PG_INT : MYSQL_INT;
    for (const c of cols) if (set.has(c.type)) (ints ??= new Set()).add(c.name);
  }
  const out: Obj[] = new Array(rows.length);
  for (let i = 0; i < rows.length; i++) {
    const r = rows[i]!;
    const o: Obj = {};
    for (const k in r) o[k] = toFloeValue(r[k], ints !== undefined && ints.has(k));
    out[i] = o;
  }
  return out;
}

function toFloeValue(v: unknown, int: boolean): Value {
  if (v === null || v === undefined) return null;
  switch (typeof v) {
    case "bigint":
    case "boolean":
      return v;
    case "number":
      return int && Number.isInteger(v) ? BigInt(v) : v;
    case "string":
      return int && /^-?\d+$/.test(v) ? BigInt(v) : v;
  }
  if (v instanceof Date) return new DateTime(v.getTime(), 0, UTC);
  if (v instanceof Uint8Array) return new Uint8Array(v);
  if (Array.isArray(v)) return v.map((x) => toFloeValue(x, false));
  if (typeof v === "object") {
    const o: Obj = {};
    for (const [k, x] of Object.entries(v as Record<string, unknown>)) o[k] = toFloeValue(x, false);
    return o;
  }
  return String(v);
}

/** A floe value as a statement parameter: datetimes as Dates, collections as their JSON text. */
export function toParam(v: Value | undefined): unknown {
  if (v === undefined || v === null) return null;
  if (v instanceof DateTime) return new Date(v.ms);
  if (Array.isArray(v) || isObj(v)) return JSON.stringify(v, (_k, x: unknown) => (typeof x === "bigint" ? Number(x) : x));
  if (typeof v === "object" && !(v instanceof Uint8Array)) return String(v);
  return v;
}

const PLAIN = /^[A-Za-z_][A-Za-z0-9_$]*$/;

/**
 * An identifier for SQL text: a plain name (`deviceId`, `db.table`) is written as is, the way
 * eKuiper writes it (so PostgreSQL folds its case as usual); anything else is quoted, so a
 * column name can never inject SQL.
 */
export function sqlIdent(dialect: SqlDialect, name: string, dotted = false): string {
  const parts = dotted ? name.split(".") : [name];
  return parts
    .map((p) => {
      if (PLAIN.test(p)) return p;
      return dialect === "mysql" ? "`" + p.replace(/`/g, "``") + "`" : '"' + p.replace(/"/g, '""') + '"';
    })
    .join(".");
}
