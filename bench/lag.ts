/**
 * Event-loop lag of a step (the stall budget): floe's `floe_event_loop_lag_seconds`
 * histogram is read from /metrics before and after the send; the difference is the lag of every
 * 10 ms probe tick during the send. p99.9 and max are reported as the bucket bound they fall under
 * (the buckets include the budget's 10 ms and 30 ms, so the verdict is exact).
 */

/** Bucket upper bounds (seconds) → cumulative tick counts, +Inf as Infinity. */
export type LagHistogram = Map<number, number>;

export function parseLag(metrics: string): LagHistogram {
  const h: LagHistogram = new Map();
  for (const line of metrics.split("\n")) {
    const m = /^floe_event_loop_lag_seconds_bucket\{le="([^"]+)"\} (\S+)$/.exec(line);
    if (m) h.set(m[1] === "+Inf" ? Infinity : Number(m[1]), Number(m[2]));
  }
  return h;
}

export interface LagStep {
  ticks: number;
  /** Upper bound of the bucket holding the 99.9th percentile tick, ms (Infinity: above the last bucket). */
  p999_ms: number;
  /** Upper bound of the highest non-empty bucket, ms. */
  max_ms: number;
  /** p99.9 ≤ 10 ms and max ≤ 30 ms. */
  within_budget: boolean;
}

export const BUDGET = { p999_ms: 10, max_ms: 30 } as const;

export function lagBetween(before: LagHistogram, after: LagHistogram): LagStep {
  const bounds = [...after.keys()].sort((a, b) => a - b);
  const cum = bounds.map((b) => (after.get(b) ?? 0) - (before.get(b) ?? 0));
  const ticks = cum[cum.length - 1] ?? 0;
  if (ticks <= 0) return { ticks: 0, p999_ms: 0, max_ms: 0, within_budget: true };
  const ms = (b: number) => (b === Infinity ? Infinity : Math.round(b * 1e4) / 10);
  let p999 = Infinity;
  for (let i = 0; i < bounds.length; i++) {
    if (cum[i]! >= 0.999 * ticks) {
      p999 = bounds[i]!;
      break;
    }
  }
  let max = bounds[0]!;
  for (let i = 0; i < bounds.length; i++) {
    if (cum[i]! >= ticks) {
      max = bounds[i]!;
      break;
    }
  }
  const p = ms(p999);
  const m = ms(max);
  return { ticks, p999_ms: p, max_ms: m, within_budget: p <= BUDGET.p999_ms && m <= BUDGET.max_ms };
}
