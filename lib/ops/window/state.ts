/**
 * STATEWINDOW(begin[, emit]) OVER (PARTITION BY …) (windows §4.6): condition-driven windows, one
 * state machine per partition. Partial windows are never emitted.
 */
import type { Evaluator } from "../../expr/compile.ts";
import type { HitState } from "../../expr/hits.ts";
import type { Tuple } from "../../expr/row.ts";
import { fmtV } from "../../value/values.ts";
import { triggers } from "./condition.ts";
import { WindowOp, type WindowEnv } from "./window-op.ts";

interface State {
  started: boolean;
  start: number;
  rows: Tuple[];
}

export class StateWindowOp extends WindowOp {
  private readonly states = new Map<string, State>();
  constructor(
    name: string,
    env: WindowEnv,
    private readonly begin: Evaluator,
    private readonly emitCond: Evaluator,
    private readonly single: boolean,
    private readonly partition: Evaluator[],
    private readonly hits: HitState | undefined,
  ) {
    super(name, env);
  }

  /** Only boolean true counts; errors count as false (windows §4.6). */
  private holds(cond: Evaluator, t: Tuple): boolean {
    return triggers(cond, this.hits, t);
  }

  protected onRow(t: Tuple): void {
    this.step(t, true);
  }

  protected override overCap(t: Tuple): void {
    this.step(t, false);
  }

  /** One row through its partition's state machine; `hold`: the row joins the window (else only its conditions count). */
  private step(t: Tuple, hold: boolean): void {
    let key = "parKey_";
    for (const p of this.partition) {
      try {
        key += fmtV(p(t, { window: null })) + ",";
      } catch {
        // a failing partition expression is skipped (windows §4.6)
      }
    }
    let s = this.states.get(key);
    if (!s) this.states.set(key, (s = { started: false, start: 0, rows: [] }));
    if (!s.started) {
      if (this.holds(this.begin, t)) Object.assign(s, { started: true, start: t.ts, rows: hold ? [t] : [] });
      else if (hold) this.rowCap?.releaseOne(t);
      return;
    }
    if (this.single) {
      if (this.holds(this.begin, t)) {
        const rows = s.rows;
        const start = s.start;
        s.rows = hold ? [t] : [];
        s.start = t.ts;
        this.rowCap?.release(rows);
        this.emitWindow(rows, { start, end: t.ts, trigger: t.ts });
      } else if (hold) s.rows.push(t);
      return;
    }
    if (hold) s.rows.push(t);
    if (this.holds(this.emitCond, t)) {
      const rows = s.rows;
      s.rows = [];
      s.started = false;
      this.rowCap?.release(rows);
      this.emitWindow(rows, { start: s.start, end: t.ts, trigger: t.ts });
    }
  }

  flushTime(): undefined {
    return undefined;
  }

  override snapshot(): unknown {
    const states: [string, boolean, number, Tuple[]][] = [];
    for (const [k, s] of this.states) states.push([k, s.started, s.start, s.rows]);
    return { states, hits: this.hits ? [this.hits.count, this.hits.time] : null };
  }

  override restore(s: unknown): void {
    const st = s as { states: [string, boolean, number, Tuple[]][]; hits: [number, number] | null };
    for (const [k, started, start, rows] of st.states) {
      this.states.set(k, { started, start, rows });
      this.rowCap?.restored(rows);
    }
    if (this.hits && st.hits) [this.hits.count, this.hits.time] = st.hits;
  }
}
