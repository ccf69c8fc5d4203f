/**
 * The tick loop of tumbling, hopping and session windows (windows §3.3): a first timer at the
 * aligned end, then a period; a tick more than 50 ms off schedule re-aligns without emitting.
 */
import type { TimeUnit } from "../../sql/ast.ts";
import type { Zone } from "../../value/time.ts";
import { alignedEnd } from "./align.ts";
import type { Clock, Timer } from "./clock.ts";

export class Ticker {
  private timer: Timer | undefined;
  private next = 0;
  /** Time of the next emission the loop will make. */
  nextTick = 0;
  /** When the pending timer fires, and the window end it is expected to emit. */
  private due = 0;
  private grid = 0;

  constructor(
    private readonly clock: Clock,
    private readonly zone: Zone,
    private readonly k: number,
    private readonly unit: TimeUnit,
    private readonly period: number,
    private readonly onTick: (t: number) => void,
  ) {}

  start(): void {
    this.startAt(alignedEnd(this.clock.now(), this.k, this.unit, this.zone), undefined);
  }

  /** A first tick emitting `grid`, due at `due` (the aligned end itself when undefined). */
  private startAt(grid: number, due: number | undefined): void {
    const at = due ?? grid;
    this.due = at;
    this.grid = grid;
    this.nextTick = Math.max(at, this.clock.now());
    this.timer = this.clock.schedule(at, () => {
      const phase = this.clock.now();
      this.next = grid;
      this.nextTick = phase + this.period;
      this.onTick(grid);
      this.arm(phase + this.period);
    });
  }

  /** The pending tick (checkpoints): when it is due and the window end it emits. */
  snapshot(): [number, number] {
    return [this.due, this.grid];
  }

  /** Replaces the pending tick by a saved one; a tick already past fires at the next clock advance. */
  restore(s: unknown): void {
    const [due, grid] = s as [number, number];
    this.timer?.cancel();
    this.startAt(grid, due);
  }

  private arm(at: number): void {
    this.due = at;
    this.grid = this.next + this.period;
    this.timer = this.clock.schedule(at, () => {
      const r = this.clock.now();
      this.next += this.period;
      if (Math.abs(r - this.next) < 50) {
        this.nextTick = r + this.period;
        this.onTick(this.next);
        this.arm(r + this.period);
      } else {
        this.start();
      }
    });
  }

  stop(): void {
    this.timer?.cancel();
  }
}
