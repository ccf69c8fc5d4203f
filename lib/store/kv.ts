/**
 * The daemon's definitions store: one bun:sqlite file (`<data>/sqliteKV.db`) in WAL mode, one
 * key-value table split into namespaces. Every write is its own committed transaction before the
 * caller replies, so `kill -9` loses nothing acknowledged: with WAL, a commit has been written to
 * the WAL file (synchronous=NORMAL) and survives a process crash; only a power loss could drop the
 * last commits, and `synchronous=FULL` (`basic.storeSync: full`) closes that too.
 */
import { Database, type Statement } from "bun:sqlite";
import { join } from "node:path";

/** The namespaces (eKuiper's KV tables). */
export type Namespace =
  | "stream"
  | "tempStream"
  | "rule"
  | "confKey"
  | "upload"
  | "script"
  | "schema"
  | "asyncTask"
  | "importStatus"
  | "meta";

export class Kv {
  private readonly db: Database;
  private readonly getStmt: Statement<{ value: string }, [string, string]>;
  private readonly setStmt: Statement<unknown, [string, string, string]>;
  private readonly insStmt: Statement<unknown, [string, string, string]>;
  private readonly delStmt: Statement<unknown, [string, string]>;
  private readonly listStmt: Statement<{ key: string; value: string }, [string]>;
  private readonly clearStmt: Statement<unknown, [string]>;

  constructor(path: string, sync: "normal" | "full" = "normal") {
    this.db = new Database(path, { create: true, strict: true });
    this.db.run("PRAGMA journal_mode = WAL");
    this.db.run(`PRAGMA synchronous = ${sync === "full" ? "FULL" : "NORMAL"}`);
    this.db.run("PRAGMA busy_timeout = 5000");
    this.db.run("CREATE TABLE IF NOT EXISTS kv (ns TEXT NOT NULL, key TEXT NOT NULL, value TEXT NOT NULL, PRIMARY KEY (ns, key)) WITHOUT ROWID");
    this.getStmt = this.db.query("SELECT value FROM kv WHERE ns = ? AND key = ?");
    this.setStmt = this.db.query("INSERT INTO kv (ns, key, value) VALUES (?, ?, ?) ON CONFLICT (ns, key) DO UPDATE SET value = excluded.value");
    this.insStmt = this.db.query("INSERT OR IGNORE INTO kv (ns, key, value) VALUES (?, ?, ?)");
    this.delStmt = this.db.query("DELETE FROM kv WHERE ns = ? AND key = ?");
    this.listStmt = this.db.query("SELECT key, value FROM kv WHERE ns = ? ORDER BY key");
    this.clearStmt = this.db.query("DELETE FROM kv WHERE ns = ?");
  }

  static open(dataDir: string, name = "sqliteKV.db"): Kv {
    return new Kv(join(dataDir, name));
  }

  get(ns: Namespace, key: string): string | undefined {
    return this.getStmt.get(ns, key)?.value;
  }

  set(ns: Namespace, key: string, value: string): void {
    this.setStmt.run(ns, key, value);
  }

  /** Inserts only when absent (eKuiper's Setnx); false when the key existed. */
  setnx(ns: Namespace, key: string, value: string): boolean {
    return this.insStmt.run(ns, key, value).changes > 0;
  }

  delete(ns: Namespace, key: string): boolean {
    return this.delStmt.run(ns, key).changes > 0;
  }

  /** Entries of a namespace in ascending key order. */
  entries(ns: Namespace): [string, string][] {
    return this.listStmt.all(ns).map((r) => [r.key, r.value]);
  }

  keys(ns: Namespace): string[] {
    return this.listStmt.all(ns).map((r) => r.key);
  }

  clear(ns: Namespace): void {
    this.clearStmt.run(ns);
  }

  /** Runs `fn` in one transaction (all or nothing). */
  transaction<T>(fn: () => T): T {
    return this.db.transaction(fn)();
  }

  close(): void {
    this.db.close();
  }
}
