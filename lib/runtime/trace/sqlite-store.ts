/**
 * The trace store on disk (`openTelemetry.enableLocalStorage: true`, config-and-cli.md §2.7):
 * `<data>/trace.db` in bun:sqlite, the same queries as the memory store (store.ts) and the same
 * bounds — the most recent `localTraceCapacity` traces, MAX_SPANS_PER_TRACE spans each — and it
 * keeps them across restarts. Spans are not written on the message path: `add` only queues them
 * (at most PENDING_MAX, the rest dropped and counted) and a timer writes them in transactions of
 * CHUNK spans for at most the turn budget (core/turn.ts) a turn of the event loop; the queue is also bounded in bytes
 * (`localTraceMaxBytes`, core/byte-budget.ts). A query waits, without blocking,
 * until the spans queued before it are written.
 */
import { Database, type Statement } from "bun:sqlite";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { ByteBudget } from "../../core/byte-budget.ts";
import { Turn, TURN_MS } from "../../core/turn.ts";
import type { Span, SpanLink } from "./span.ts";
import { detachLinks, MAX_SPANS_PER_TRACE, spanBytes, spanTree, type SpanRecord, type TraceNode } from "./store.ts";

/** Spans waiting for the writer; more are dropped (counted) until it catches up. */
export const PENDING_MAX = 8192;
/** Spans per transaction; a burst is spread over turns of the turn budget. */
const CHUNK = 64;
const FLUSH_DELAY_MS = 50;

interface Row {
  name: string;
  trace_id: string;
  span_id: string;
  parent_id: string;
  rule_id: string;
  start: number;
  end: number;
  attrs: string;
  links: string | null;
}

export class SqliteTraceStore {
  private readonly db: Database;
  /** Queued spans from `head` on (reset when all are written: no shifting). */
  private queue: Span[] = [];
  private head = 0;
  /** Spans taken off the queue by the writer so far; a query waits for the count it saw. */
  private taken = 0;
  private waiters: { readonly target: number; readonly done: () => void }[] = [];
  private timer: ReturnType<typeof setTimeout> | undefined;
  /** Spans refused: their trace was full, or the queue was. */
  dropped = 0;
  /** The spans queued for the writer (rows: spans). */
  readonly budget: ByteBudget;
  /** Bytes of each queued span, by queue position. */
  private sizes: number[] = [];
  private readonly newTrace: Statement<unknown, [string, string]>;
  private readonly countSpan: Statement<unknown, [string, number]>;
  private readonly insSpan: Statement<unknown, [string, string, string, string, string, number, number, string, string | null]>;
  private readonly evict: Statement<unknown, [number]>;
  private readonly ids: Statement<{ trace_id: string }, [string, number]>;
  private readonly spans: Statement<Row, [string]>;
  private readonly write: (spans: Span[]) => void;

  constructor(
    dataDir: string,
    readonly capacity: number,
    maxBytes = Infinity,
  ) {
    this.budget = new ByteBudget(maxBytes, PENDING_MAX);
    mkdirSync(dataDir, { recursive: true });
    const db = (this.db = new Database(join(dataDir, "trace.db"), { create: true, strict: true }));
    db.run("PRAGMA journal_mode = WAL");
    // Traces are diagnostics: a power cut may lose the last ones, a write need not wait for the disk.
    db.run("PRAGMA synchronous = NORMAL");
    db.run("PRAGMA foreign_keys = ON");
    db.run("CREATE TABLE IF NOT EXISTS traces (seq INTEGER PRIMARY KEY AUTOINCREMENT, trace_id TEXT NOT NULL UNIQUE, rule_id TEXT NOT NULL, spans INTEGER NOT NULL)");
    db.run("CREATE INDEX IF NOT EXISTS traces_rule ON traces (rule_id, seq)");
    db.run(
      "CREATE TABLE IF NOT EXISTS spans (trace_id TEXT NOT NULL REFERENCES traces (trace_id) ON DELETE CASCADE, span_id TEXT NOT NULL, parent_id TEXT NOT NULL, " +
        "name TEXT NOT NULL, rule_id TEXT NOT NULL, start REAL NOT NULL, end REAL NOT NULL, attrs TEXT NOT NULL, links TEXT)",
    );
    db.run("CREATE INDEX IF NOT EXISTS spans_trace ON spans (trace_id)");
    this.newTrace = db.query("INSERT OR IGNORE INTO traces (trace_id, rule_id, spans) VALUES (?, ?, 0)");
    this.countSpan = db.query("UPDATE traces SET spans = spans + 1 WHERE trace_id = ? AND spans < ?");
    this.insSpan = db.query("INSERT INTO spans (trace_id, span_id, parent_id, name, rule_id, start, end, attrs, links) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)");
    // Everything older than the newest `capacity` traces (their spans go by the cascade).
    this.evict = db.query("DELETE FROM traces WHERE seq <= (SELECT seq FROM traces ORDER BY seq DESC LIMIT 1 OFFSET ?)");
    this.ids = db.query("SELECT trace_id FROM traces WHERE rule_id = ? ORDER BY seq DESC LIMIT ?");
    this.spans = db.query("SELECT trace_id, span_id, parent_id, name, rule_id, start, end, attrs, links FROM spans WHERE trace_id = ? ORDER BY rowid");
    this.write = db.transaction((spans: Span[]) => {
      for (const s of spans) {
        this.newTrace.run(s.traceId, s.ruleId);
        if (this.countSpan.run(s.traceId, MAX_SPANS_PER_TRACE).changes === 0) {
          this.dropped++;
          continue;
        }
        const links = s.links?.length ? JSON.stringify(s.links.map((l) => ({ traceId: l.traceId, spanId: l.spanId }))) : null;
        this.insSpan.run(s.traceId, s.spanId, s.parentSpanId, s.name, s.ruleId, s.start, s.end, JSON.stringify(s.attributes), links);
      }
      this.evict.run(this.capacity);
    });
  }

  add(span: Span): void {
    detachLinks(span);
    const bytes = spanBytes(span);
    if (!this.budget.take(bytes)) {
      this.dropped++;
      return;
    }
    this.queue.push(span);
    this.sizes.push(bytes);
    this.timer ??= setTimeout(() => this.writeTurn(), FLUSH_DELAY_MS);
  }

  private writeTurn(): void {
    this.timer = undefined;
    const turn = Turn.inLoop(TURN_MS);
    // A chunk before the first look: the loop turn's shared time may be spent already (core/turn.ts).
    while (this.head < this.queue.length) {
      this.writeChunk(CHUNK);
      if (turn.spent()) break;
    }
    if (this.head < this.queue.length) this.timer = setTimeout(() => this.writeTurn(), 0);
  }

  private writeChunk(n: number): void {
    const batch = this.queue.slice(this.head, this.head + n);
    this.write(batch);
    let bytes = 0;
    for (let i = this.head; i < this.head + batch.length; i++) bytes += this.sizes[i]!;
    this.budget.release(bytes, batch.length);
    this.head += batch.length;
    this.taken += batch.length;
    if (this.head === this.queue.length) {
      this.queue = [];
      this.sizes = [];
      this.head = 0;
    }
    if (this.waiters.length === 0) return;
    const ready = this.waiters.filter((w) => w.target <= this.taken);
    this.waiters = this.waiters.filter((w) => w.target > this.taken);
    for (const w of ready) w.done();
  }

  /** Resolves once every span queued now is written. */
  private settled(): Promise<void> | undefined {
    const target = this.taken + this.queue.length - this.head;
    if (target === this.taken) return undefined;
    return new Promise((done) => this.waiters.push({ target, done }));
  }

  /** Trace ids of `ruleId`, most recent first; `limit` ≤ 0 means all. */
  async traceIds(ruleId: string, limit: number): Promise<string[]> {
    await this.settled();
    return this.ids.all(ruleId, limit > 0 ? limit : -1).map((r) => r.trace_id);
  }

  async tree(traceId: string): Promise<TraceNode | undefined> {
    await this.settled();
    const rows = this.spans.all(traceId);
    return rows.length ? spanTree(rows.map(toRecord)) : undefined;
  }

  /** Shutdown: what is queued is written now, then the file is closed. */
  close(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.writeChunk(this.queue.length - this.head);
    this.db.close();
  }
}

function toRecord(r: Row): SpanRecord {
  return {
    name: r.name,
    traceId: r.trace_id,
    spanId: r.span_id,
    parentSpanId: r.parent_id,
    ruleId: r.rule_id,
    start: r.start,
    end: r.end,
    attributes: JSON.parse(r.attrs) as Record<string, string>,
    links: r.links === null ? null : (JSON.parse(r.links) as SpanLink[]),
  };
}
