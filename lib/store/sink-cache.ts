/**
 * Disk pages of the sink cache (rules-and-sinks.md §3.4) in bun:sqlite: `<data>/cache.db`, one
 * table, one row per page of `bufferPageSize` items, keyed by the sink's cache key (eKuiper's
 * `sink/<ruleId><opId><instance>`) and ordered by a sequence number. Pages are opaque strings;
 * the cache queue serialises its items.
 */
import { Database, type Statement } from "bun:sqlite";
import { mkdirSync } from "node:fs";
import { join } from "node:path";

const open = new Map<string, Database>();

/** The cache database of a data directory (one connection per file per process). */
export function cacheDb(dataDir: string): Database {
  const path = join(dataDir, "cache.db");
  let db = open.get(path);
  if (!db) {
    mkdirSync(dataDir, { recursive: true });
    db = new Database(path, { create: true, strict: true });
    db.run("PRAGMA journal_mode = WAL");
    db.run("PRAGMA synchronous = NORMAL");
    db.run("PRAGMA busy_timeout = 5000");
    db.run("CREATE TABLE IF NOT EXISTS sink_cache (key TEXT NOT NULL, seq INTEGER NOT NULL, n INTEGER NOT NULL, data TEXT NOT NULL, PRIMARY KEY (key, seq)) WITHOUT ROWID");
    open.set(path, db);
  }
  return db;
}

export class SinkCacheStore {
  private readonly ins: Statement<unknown, [string, number, number, string]>;
  private readonly first: Statement<{ seq: number; n: number; data: string }, [string]>;
  private readonly del: Statement<unknown, [string, number]>;
  private readonly bounds: Statement<{ lo: number | null; hi: number | null; pages: number; items: number | null }, [string]>;
  private readonly clearStmt: Statement<unknown, [string]>;
  private lo = 0;
  private hi = -1;
  /** Pages and items currently on disk. */
  pages = 0;
  items = 0;

  constructor(
    private readonly db: Database,
    readonly key: string,
  ) {
    this.ins = db.query("INSERT INTO sink_cache (key, seq, n, data) VALUES (?, ?, ?, ?)");
    this.first = db.query("SELECT seq, n, data FROM sink_cache WHERE key = ? ORDER BY seq LIMIT 1");
    this.del = db.query("DELETE FROM sink_cache WHERE key = ? AND seq = ?");
    this.bounds = db.query("SELECT min(seq) AS lo, max(seq) AS hi, count(*) AS pages, sum(n) AS items FROM sink_cache WHERE key = ?");
    this.clearStmt = db.query("DELETE FROM sink_cache WHERE key = ?");
    const b = this.bounds.get(key)!;
    if (b.pages > 0) {
      this.lo = b.lo!;
      this.hi = b.hi!;
      this.pages = b.pages;
      this.items = b.items ?? 0;
    }
  }

  /** Writes a page after the newest. */
  append(n: number, data: string): void {
    if (this.pages === 0) this.lo = this.hi = 0;
    else this.hi++;
    this.ins.run(this.key, this.hi, n, data);
    this.pages++;
    this.items += n;
  }

  /** Writes pages before the oldest, keeping their order (state saved at stop). */
  prepend(pages: { n: number; data: string }[]): void {
    if (pages.length === 0) return;
    const tx = this.db.transaction(() => {
      for (let i = pages.length - 1; i >= 0; i--) {
        const p = pages[i]!;
        if (this.pages === 0) this.lo = this.hi = 0;
        else this.lo--;
        this.ins.run(this.key, this.lo, p.n, p.data);
        this.pages++;
        this.items += p.n;
      }
    });
    tx();
  }

  /** Removes and returns the oldest page. */
  shift(): { n: number; data: string } | undefined {
    if (this.pages === 0) return undefined;
    const row = this.first.get(this.key);
    if (!row) return undefined;
    this.del.run(this.key, row.seq);
    this.pages--;
    this.items -= row.n;
    this.lo = row.seq + 1;
    return { n: row.n, data: row.data };
  }

  clear(): void {
    this.clearStmt.run(this.key);
    this.pages = 0;
    this.items = 0;
    this.lo = 0;
    this.hi = -1;
  }
}

/** Deletes every cache page of a rule (rule deletion, rest-api.md §5). */
export function clearRuleCache(dataDir: string, ruleId: string): void {
  cacheDb(dataDir).query("DELETE FROM sink_cache WHERE key LIKE ? ESCAPE '\\'").run(`sink/${ruleId.replace(/[\\%_]/g, "\\$&")}/%`);
}
