/**
 * The checkpoint store (rules-and-sinks.md §5): `<data>/checkpoint.db` in bun:sqlite, WAL. One row
 * per complete checkpoint of a rule — the encoded state of every stateful node, written in one
 * committed transaction, so a checkpoint is either whole or absent after a crash. The last 3 are
 * kept per rule; a restart restores the newest.
 */
import { Database, type Statement } from "bun:sqlite";
import { mkdirSync } from "node:fs";
import { join } from "node:path";

/** Complete checkpoints kept per rule. */
export const KEEP_CHECKPOINTS = 3;

const open = new Map<string, CheckpointStore>();

export class CheckpointStore {
  private readonly insert: Statement<unknown, [string, number, number, string]>;
  private readonly newest: Statement<{ id: number; state: string }, [string]>;
  private readonly prune: Statement<unknown, [string, string, number]>;
  private readonly clearStmt: Statement<unknown, [string]>;
  private readonly countStmt: Statement<{ n: number }, [string]>;
  private readonly prefixStmt: Statement<unknown, [number, string]>;

  constructor(private readonly db: Database) {
    this.insert = db.query("INSERT INTO checkpoint (rule, id, ts, state) VALUES (?, ?, ?, ?)");
    this.newest = db.query("SELECT id, state FROM checkpoint WHERE rule = ? ORDER BY id DESC LIMIT 1");
    this.prune = db.query(
      "DELETE FROM checkpoint WHERE rule = ? AND id NOT IN (SELECT id FROM checkpoint WHERE rule = ? ORDER BY id DESC LIMIT ?)",
    );
    this.clearStmt = db.query("DELETE FROM checkpoint WHERE rule = ?");
    this.countStmt = db.query("SELECT count(*) AS n FROM checkpoint WHERE rule = ?");
    this.prefixStmt = db.query("DELETE FROM checkpoint WHERE substr(rule, 1, ?) = ?");
  }

  /** Stores a complete checkpoint of `rule` and drops all but the newest KEEP_CHECKPOINTS. */
  save(rule: string, state: string, ts: number): void {
    this.db.transaction(() => {
      const id = (this.newest.get(rule)?.id ?? 0) + 1;
      this.insert.run(rule, id, ts, state);
      this.prune.run(rule, rule, KEEP_CHECKPOINTS);
    })();
  }

  /** The newest complete checkpoint of `rule` (encoded), if any. */
  latest(rule: string): string | undefined {
    return this.newest.get(rule)?.state;
  }

  count(rule: string): number {
    return this.countStmt.get(rule)!.n;
  }

  /** Deletes the checkpoints of every rule key starting with `prefix` (a partitioned rule's runs: `<id>.p`). */
  clearPrefix(prefix: string): void {
    this.prefixStmt.run(prefix.length, prefix);
  }

  /** Deletes every checkpoint of `rule` (rule deletion, §5). */
  clear(rule: string): void {
    this.clearStmt.run(rule);
  }
}

/** The checkpoint store of a data directory (one connection per file per process). */
export function checkpointStore(dataDir: string): CheckpointStore {
  const path = join(dataDir, "checkpoint.db");
  let s = open.get(path);
  if (!s) {
    mkdirSync(dataDir, { recursive: true });
    const db = new Database(path, { create: true, strict: true });
    db.run("PRAGMA journal_mode = WAL");
    db.run("PRAGMA synchronous = NORMAL");
    db.run("PRAGMA busy_timeout = 5000");
    db.run("CREATE TABLE IF NOT EXISTS checkpoint (rule TEXT NOT NULL, id INTEGER NOT NULL, ts INTEGER NOT NULL, state TEXT NOT NULL, PRIMARY KEY (rule, id)) WITHOUT ROWID");
    s = new CheckpointStore(db);
    open.set(path, s);
  }
  return s;
}
