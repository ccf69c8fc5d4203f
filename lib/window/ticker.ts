/**
 * The tick loop of tumbling, hopping and session windows (windows §3.3): a first timer at the
 * aligned end, then a period; a tick more than 50 ms off schedule re-aligns without emitting.
 */
import type { TimeUnit } from "../sql/ast.ts";
import type { Zone } from "../expr/time.ts";
import { alignedEnd } from "./align.ts";
import type { Clock, Timer } from "./clock.ts";

export class Ticker {
  private timer: Timer | undefined;
  private next = 0;
  /** Time of the next emission the loop will make. */
  nextTick = 0;

  constructor(
    private readonly clock: Clock,
    private readonly zone: Zone,
    private readonly k: number,
    private readonly unit: TimeUnit,
    private readonly period: number,
    private readonly onTick: (t: number) => void,
  ) {}

  start(): void {
    const first = alignedEnd(this.clock.now(), this.k, this.unit, this.zone);
    this.nextTick = Math.max(first, this.clock.now());
    this.timer = this.clock.schedule(first, () => {
      const phase = this.clock.now();
      this.next = first;
      this.nextTick = phase + this.period;
      this.onTick(first);
      this.arm(phase + this.period);
    });
  }

  private arm(at: number): void {
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
