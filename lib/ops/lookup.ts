/**
 * The lookup node (sql §12.5), named after its table: per input row, evaluates the key
 * expressions, queries the table, and emits one joined row per table row (LEFT: the input row
 * alone when none). Output is a collection, like a join's. Synchronous sources (memory,
 * simulator) answer in the push; for asynchronous ones (redis, httppull) items wait in a bounded
 * FIFO and leave in input order. The FIFO's room is a backpressure gate the execution (runtime/execution.ts) honours.
 */
import { EngineError, RowError } from "../errors.ts";
import { JoinedRow, Tuple, type EvalCtx, type Row, type WindowRange } from "../expr/row.ts";
import type { Obj, Value } from "../value/values.ts";
import type { LookupSource } from "../lookup/table.ts";
import type { LookupSpec } from "../plan/specs.ts";
import { Collection, type Item } from "../core/item.ts";
import { Operator, type OpEnv } from "../core/operator.ts";
import { Ring } from "../core/ring.ts";

/** Items an asynchronous lookup may hold before the rule stops feeding it. */
export const LOOKUP_CAPACITY = 256;
/**
 * The hard bound: paths that ignore the room gate (a flushing stop, pipe mode's virtual-clock
 * runner) can overshoot the soft one; past this the item fails, counted, rather than growing.
 */
const HARD_CAPACITY = LOOKUP_CAPACITY * 64;

const NONE: Obj[] = [];

/** An input item waiting for its lookups. */
class Pending {
  readonly rows: Row[];
  readonly window: WindowRange | null;
  readonly results: Obj[][];
  waiting = 0;
  error: RowError | null = null;
  constructor(rows: Row[], window: WindowRange | null) {
    this.rows = rows;
    this.window = window;
    this.results = new Array<Obj[]>(rows.length);
  }
}

function lookupError(e: unknown): RowError {
  if (e instanceof RowError) return e;
  return new RowError(e instanceof Error ? e.message : String(e));
}

export class LookupOp extends Operator {
  readonly spec: LookupSpec;
  private source: LookupSource | undefined;
  private readonly ctx: EvalCtx = { window: null };
  private readonly fifo = new Ring<Pending>(HARD_CAPACITY);
  private readonly roomWaiters: (() => void)[] = [];
  private readonly settleWaiters: (() => void)[] = [];
  private detached = false;

  constructor(name: string, env: OpEnv, spec: LookupSpec) {
    super(name, env, "");
    this.spec = spec;
  }

  /** Gives the node its opened source (the execution opens it before any row arrives). */
  attach(source: LookupSource): void {
    this.source = source;
    this.detached = false;
  }

  /** Closes the source; results still pending are dropped. */
  async detach(): Promise<void> {
    this.detached = true;
    const s = this.source;
    this.source = undefined;
    this.fifo.clear();
    this.wakeAll();
    await s?.close();
  }

  /** Items this node still takes before the rule should wait. */
  override room(): number {
    return LOOKUP_CAPACITY - this.queued();
  }

  override onRoom(fn: () => void): void {
    if (this.room() > 0) fn();
    else this.roomWaiters.push(fn);
  }

  /** Resolves once no item waits for a lookup. */
  settle(): Promise<void> {
    if (this.queued() === 0) return Promise.resolve();
    return new Promise((resolve) => this.settleWaiters.push(resolve));
  }

  /** Rows waiting for their lookup. */
  queued(): number {
    return this.fifo.length;
  }

  protected process(item: Item): void {
    let rows: Row[];
    let window: WindowRange | null = null;
    if (item instanceof Tuple) rows = [item];
    else if (item instanceof Collection && item.groups === null) ((rows = item.rows), (window = item.window));
    else return;
    this.metrics.messagesProcessed += rows.length;
    const src = this.source;
    if (!src) throw new RowError(`lookup table ${this.spec.table.name} is not open`);
    const p = new Pending(rows, window);
    const ctx = this.ctx;
    ctx.window = window;
    const { fields, values } = this.spec;
    const vals = new Array<Value>(values.length);
    for (let i = 0; i < rows.length; i++) {
      let missing = false;
      for (let k = 0; k < values.length; k++) {
        const v = values[k]!(rows[i]!, ctx);
        if (v === null) {
          missing = true;
          break;
        }
        vals[k] = v;
      }
      if (missing) {
        p.results[i] = NONE;
        continue;
      }
      let r: Obj[] | Promise<Obj[]>;
      try {
        r = src.lookup(fields, vals.slice());
      } catch (e) {
        if (!(e instanceof EngineError || e instanceof RowError)) throw e;
        throw lookupError(e);
      }
      if (!(r instanceof Promise)) {
        p.results[i] = r;
        continue;
      }
      p.waiting++;
      const at = i;
      r.then(
        (res) => {
          p.results[at] = res;
          this.settled(p);
        },
        (e: unknown) => {
          p.error ??= lookupError(e);
          this.settled(p);
        },
      );
    }
    if (p.waiting === 0 && this.queued() === 0) {
      this.output(p);
      return;
    }
    if (!this.fifo.push(p)) throw new RowError(`lookup table ${this.spec.table.name}: ${HARD_CAPACITY} items are waiting for lookups`);
  }

  private settled(p: Pending): void {
    p.waiting--;
    if (this.detached) return;
    try {
      this.drain();
    } catch (e) {
      // Downstream nodes count record errors themselves; anything else is this node's to report.
      this.metrics.exception(e instanceof Error ? e.message : String(e), this.env.now());
    }
  }

  /** Emits the ready items at the head of the FIFO, in input order. */
  private drain(): void {
    const q = this.fifo;
    for (let p = q.peek(); p !== undefined && p.waiting === 0; p = q.peek()) {
      q.shift();
      if (p.error) this.fail(p.error);
      else this.output(p);
    }
    this.wakeAll();
  }

  private wakeAll(): void {
    if (this.room() > 0 && this.roomWaiters.length) for (const fn of this.roomWaiters.splice(0)) fn();
    if (this.queued() === 0 && this.settleWaiters.length) for (const fn of this.settleWaiters.splice(0)) fn();
  }

  private output(p: Pending): void {
    const out: Row[] = [];
    const left = this.spec.type === "LEFT";
    const table = this.spec.table.name;
    for (let i = 0; i < p.rows.length; i++) {
      const row = p.rows[i]!;
      const found = p.results[i]!;
      const members = row instanceof JoinedRow ? row.tuples : [row as Tuple];
      if (found.length === 0) {
        if (left) out.push(row instanceof JoinedRow ? row : new JoinedRow(members));
        continue;
      }
      for (const r of found) out.push(new JoinedRow([...members, new Tuple(r, null, row.ts, table)]));
    }
    if (out.length > 0) this.emit(new Collection(out, p.window));
  }
}
