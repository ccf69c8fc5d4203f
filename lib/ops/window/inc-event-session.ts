/**
 * The incremental SESSIONWINDOW in event time (windows §6.3 semantics, §9 evaluation). The rows
 * released since the last watermark wait in `rows` (never more than one release, event-op.ts).
 */
import type { Tuple } from "../../expr/row.ts";
import type { IncSpec, WindowSpec } from "../../plan/window-spec.ts";
import { alignedEnd } from "./align.ts";
import { EventWindowOp } from "./event-op.ts";
import { GroupTable } from "./inc-groups.ts";
import { RowEval } from "./row-eval.ts";
import { tableEmission } from "./tables.ts";
import { unitMs } from "./tumbling.ts";
import type { WindowEnv } from "./window-op.ts";

/**
 * SESSIONWINDOW: the buffered operator's `nextSessionEnd` run row by row. A session's end is
 * decided by the row after it (or by the watermark once it is past the timeout). The end is
 * either the last row + timeout or the current max-duration tick, so a row at or beyond the tick
 * may still fall into the next session: such rows are held (not folded) until a later row moves
 * the tick past them or closes the session, and those left over start the next session.
 */
export class IncEventSessionWindowOp extends EventWindowOp {
  private readonly ev: RowEval;
  private current: GroupTable | undefined;
  /** Rows of the open session with ts ≥ tick, in order, not yet folded. */
  private held: Tuple[] = [];
  private et = 0;
  private tick = 0;
  private prev = NaN;
  private endedByTick = false;
  private readonly maxDuration: number;
  private readonly timeout: number;
  private readonly k: number;

  constructor(
    name: string,
    env: WindowEnv,
    private readonly spec: WindowSpec,
    private readonly inc: IncSpec,
  ) {
    super(name, env, true);
    this.ev = new RowEval(inc);
    this.k = spec.length / unitMs(spec);
    this.maxDuration = spec.length;
    this.timeout = spec.interval;
  }

  private align(ts: number): number {
    return alignedEnd(ts, this.k, this.spec.unit!, this.zone);
  }

  protected ownState(): unknown {
    return {
      table: this.current?.snapshot() ?? null,
      held: this.held,
      et: this.et,
      tick: this.tick,
      prev: this.prev,
      endedByTick: this.endedByTick,
    };
  }

  protected loadOwn(s: unknown): void {
    const st = s as { table: unknown; held: Tuple[]; et: number; tick: number; prev: number; endedByTick: boolean };
    this.current = st.table === null ? undefined : GroupTable.restore(st.table, this.inc);
    this.held = st.held;
    this.et = st.et;
    this.tick = st.tick;
    this.prev = st.prev;
    this.endedByTick = st.endedByTick;
  }

  protected fire(wm: number): void {
    for (const r of this.rows) this.step(r);
    if (this.current && wm - this.prev > this.timeout) this.closeSession(this.prev + this.timeout, false);
  }

  private step(r: Tuple): void {
    if (this.current) {
      let end = NaN;
      let ticked = false;
      if (r.ts - this.prev > this.timeout) end = this.prev + this.timeout;
      if (r.ts > this.tick) {
        if (this.tick - this.maxDuration > this.et && !(this.tick >= end)) {
          end = this.tick;
          ticked = true;
        }
        this.tick += this.maxDuration;
      }
      if (!Number.isNaN(end)) {
        const rest = this.closeSession(end, ticked);
        // The buffered operator recomputes from the first row left: replay them, then r.
        for (const h of rest) this.step(h);
        this.step(r);
        return;
      }
    } else {
      this.current = new GroupTable(this.inc);
      this.et = r.ts;
      this.tick = this.align(r.ts);
      // The first row of a session never ends one; it only moves a tick it has passed.
      if (r.ts > this.tick) this.tick += this.maxDuration;
    }
    this.foldHeld(this.tick);
    if (r.ts >= this.tick) this.held.push(r);
    else this.fold(r);
    this.prev = r.ts;
  }

  private fold(r: Tuple): void {
    this.ev.evaluate(r);
    this.current!.add(r, this.ev);
  }

  /** Folds the held rows older than `before`. */
  private foldHeld(before: number): void {
    const held = this.held;
    let i = 0;
    while (i < held.length && held[i]!.ts < before) this.fold(held[i++]!);
    if (i) this.held = held.slice(i);
  }

  /** Emits the session's rows older than `end`; returns the held rows that belong to the next one. */
  private closeSession(end: number, ticked: boolean): Tuple[] {
    this.foldHeld(end);
    const rest = this.held;
    this.held = [];
    const table = this.current!;
    this.current = undefined;
    if (!this.endedByTick) this.previous = this.et;
    const start = this.previous;
    this.previous = end;
    this.endedByTick = ticked;
    const c = tableEmission(this.inc, table, { start, end, trigger: end });
    if (c) this.emit(c);
    return rest;
  }
}
