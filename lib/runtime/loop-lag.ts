/**
 * Event-loop lag, measured by one timer's drift (the stall budget): a timer armed for
 * `PERIOD_MS` fires late by however long the loop was busy (a long batch, a collection, a
 * synchronous parse). Nothing is done per message. Each tick's lateness goes into a cumulative
 * histogram (Prometheus `floe_event_loop_lag_seconds`, diffable between two scrapes) and into a
 * ring of the last minute, from which the status gauges (max, p99, p99.9) are read.
 */

/** The probe's period: 100 ticks a second. */
export const PERIOD_MS = 10;
/** Upper bounds of the histogram buckets, in seconds (+Inf implied): 10 ms and 30 ms are the budget's bounds. */
export const LAG_BUCKETS = [0.001, 0.002, 0.005, 0.0075, 0.01, 0.015, 0.02, 0.03, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5] as const;
/** The window of the status gauges: one minute of ticks. */
const WINDOW = 6000;

export interface LagStats {
  /** Ticks in the window. */
  readonly samples: number;
  readonly maxMs: number;
  readonly p99Ms: number;
  readonly p999Ms: number;
}

export class LoopLag {
  /** Cumulative tick counts per bucket (the last one is +Inf), not cumulative across buckets. */
  readonly counts = new Float64Array(LAG_BUCKETS.length + 1);
  /** Sum of all lags, seconds. */
  sum = 0;
  /** Ticks measured. */
  count = 0;
  /** The largest lag seen since start, seconds. */
  maxEver = 0;
  private readonly ring = new Float64Array(WINDOW);
  private pos = 0;
  private filled = 0;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private due = 0;
  private refs = 0;

  /** Starts the probe (idempotent, reference counted); the timer never keeps the process alive. */
  start(): void {
    if (this.refs++ > 0) return;
    this.due = performance.now() + PERIOD_MS;
    this.arm();
  }

  stop(): void {
    if (this.refs === 0 || --this.refs > 0) return;
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  get running(): boolean {
    return this.refs > 0;
  }

  private arm(): void {
    this.timer = setTimeout(this.tick, PERIOD_MS);
    this.timer.unref();
  }

  private readonly tick = (): void => {
    const now = performance.now();
    this.record(Math.max(0, now - this.due) / 1000);
    this.due = now + PERIOD_MS;
    if (this.refs > 0) this.arm();
  };

  /** Adds one lag sample in seconds (the tick does; tests may). */
  record(lag: number): void {
    let b = 0;
    while (b < LAG_BUCKETS.length && lag > LAG_BUCKETS[b]!) b++;
    this.counts[b]!++;
    this.sum += lag;
    this.count++;
    if (lag > this.maxEver) this.maxEver = lag;
    this.ring[this.pos] = lag;
    this.pos = (this.pos + 1) % WINDOW;
    if (this.filled < WINDOW) this.filled++;
  }

  /** Max, p99 and p99.9 of the last minute's ticks, in milliseconds (rounded to 0.1 ms). */
  stats(): LagStats {
    const n = this.filled;
    if (n === 0) return { samples: 0, maxMs: 0, p99Ms: 0, p999Ms: 0 };
    const s = this.ring.slice(0, n).sort();
    const at = (q: number) => round(s[Math.min(n - 1, Math.ceil(q * n) - 1)]! * 1000);
    return { samples: n, maxMs: round(s[n - 1]! * 1000), p99Ms: at(0.99), p999Ms: at(0.999) };
  }
}

function round(ms: number): number {
  return Math.round(ms * 10) / 10;
}

/** The process's probe: the daemon and streaming `floe run` start it. */
export const loopLag = new LoopLag();
