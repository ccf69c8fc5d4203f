/**
 * Disk pages of the sink cache (rules-and-sinks.md §3.4) in bun:sqlite: `<data>/cache.db`, one
 * table, one row per page of at most `bufferPageSize` items, keyed by the sink's cache key
 * (eKuiper's `sink/<ruleId><opId><instance>`) and ordered by a sequence number. Pages are opaque
 * strings the cache queue writes and reads; a page grows by appending text (`data || ?`) until it
 * is full, so a write costs the new items only. The database runs in WAL mode with
 * `synchronous = NORMAL`: a committed write is in the OS once the statement returns, so it
 * survives a kill -9 of the process (not a power cut before the next checkpoint of the WAL).
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
    db.run("CREATE TABLE IF NOT EXISTS ack_ledger (rule TEXT NOT NULL, stream TEXT NOT NULL, acked INTEGER NOT NULL, covered INTEGER NOT NULL, PRIMARY KEY (rule, stream)) WITHOUT ROWID");
    open.set(path, db);
  }
  return db;
}

/** A page as listed at start: its sequence number and item count (the data is read on demand). */
export interface PageRef {
  readonly seq: number;
  readonly n: number;
}

export class SinkCacheStore {
  private readonly ins: Statement<unknown, [string, number, number, string]>;
  private readonly app: Statement<unknown, [number, string, string, number]>;
  private readonly get: Statement<{ data: string }, [string, number]>;
  private readonly del: Statement<unknown, [string, number]>;
  private readonly list: Statement<PageRef, [string]>;
  private readonly clearStmt: Statement<unknown, [string]>;
  /** Runs a function in one transaction (one WAL commit for a flush, however many pages it touches). */
  readonly tx: (fn: () => void) => void;

  constructor(
    private readonly db: Database,
    readonly key: string,
  ) {
    this.ins = db.query("INSERT INTO sink_cache (key, seq, n, data) VALUES (?, ?, ?, ?)");
    this.app = db.query("UPDATE sink_cache SET n = n + ?, data = data || ? WHERE key = ? AND seq = ?");
    this.get = db.query("SELECT data FROM sink_cache WHERE key = ? AND seq = ?");
    this.del = db.query("DELETE FROM sink_cache WHERE key = ? AND seq = ?");
    this.list = db.query("SELECT seq, n FROM sink_cache WHERE key = ? ORDER BY seq");
    this.clearStmt = db.query("DELETE FROM sink_cache WHERE key = ?");
    const t = db.transaction((fn: () => void) => fn());
    this.tx = (fn) => t(fn);
  }

  /** The pages on disk, oldest first. */
  pages(): PageRef[] {
    return this.list.all(this.key);
  }

  /** Writes a new page. */
  insert(seq: number, n: number, data: string): void {
    this.ins.run(this.key, seq, n, data);
  }

  /** Appends `n` items (encoded as `data`) to page `seq`. */
  append(seq: number, n: number, data: string): void {
    this.app.run(n, data, this.key, seq);
  }

  read(seq: number): string | undefined {
    return this.get.get(this.key, seq)?.data;
  }

  delete(seq: number): void {
    this.del.run(this.key, seq);
  }

  clear(): void {
    this.clearStmt.run(this.key);
  }
}

/** One stream's line of a rule's acknowledgement ledger. */
export interface LedgerRow {
  readonly stream: string;
  /** Messages the rule's subscription admitted (what the source may have acknowledged). */
  readonly acked: number;
  /** Of those, messages whose effect was durable: in the sink caches or in a checkpoint. */
  readonly covered: number;
}

/**
 * A rule run's acknowledgement ledger (sink-cache durability, docs/sinks.md): per stream, how many
 * messages were admitted and how many of them were durable, written in the same transaction as
 * the sink caches' pages. What a run admitted beyond what was durable is what a kill (or a stop)
 * lost; the next run reads it and counts it.
 */
export class AckLedger {
  private readonly put: Statement<unknown, [string, string, number, number]>;
  private readonly all: Statement<LedgerRow, [string]>;
  private readonly clearStmt: Statement<unknown, [string]>;
  /** Runs a function in one transaction of the cache database. */
  readonly tx: (fn: () => void) => void;

  constructor(
    db: Database,
    readonly rule: string,
  ) {
    this.put = db.query("INSERT OR REPLACE INTO ack_ledger (rule, stream, acked, covered) VALUES (?, ?, ?, ?)");
    this.all = db.query("SELECT stream, acked, covered FROM ack_ledger WHERE rule = ? ORDER BY stream");
    this.clearStmt = db.query("DELETE FROM ack_ledger WHERE rule = ?");
    const t = db.transaction((fn: () => void) => fn());
    this.tx = (fn) => t(fn);
  }

  write(stream: string, acked: number, covered: number): void {
    this.put.run(this.rule, stream, acked, covered);
  }

  rows(): LedgerRow[] {
    return this.all.all(this.rule);
  }

  clear(): void {
    this.clearStmt.run(this.rule);
  }
}

/** Deletes every cache page and the ledger of a rule (rule deletion, rest-api.md §5). */
export function clearRuleCache(dataDir: string, ruleId: string): void {
  const db = cacheDb(dataDir);
  db.query("DELETE FROM sink_cache WHERE key LIKE ? ESCAPE '\\'").run(`sink/${ruleId.replace(/[\\%_]/g, "\\$&")}/%`);
  db.query("DELETE FROM ack_ledger WHERE rule = ?").run(ruleId);
}
