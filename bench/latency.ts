/**
 * Publish → sink latency of a step. The generator records, per connection, when each
 * write handed its messages to the kernel (`SendTable`, `monoMs`); the
 * probe (bench/latency-probe.ts, a raw MQTT subscriber on the same broker) records when each
 * message arrived on the input topic — the plain subscriber, the floor — and when each of floe's
 * output rows arrived on its MQTT sink's topic. Message k of connection c has id `${tag}_${c}_${k}`
 * in the input and in W1's output, so latency = arrival − send on one clock.
 *
 * Window workloads have no per-message id in their rows: their latency is from the window's close
 * (the 10 s boundary on the wall clock a tumbling window is aligned to) to the row's arrival.
 */

/**
 * The clock the generator and the probe share: epoch ms with a fraction (Bun's `process.hrtime` counts from the
 * process's own start, so it cannot compare two processes). Each process's time origin is fixed when it starts,
 * to within a millisecond of the wall clock: absolute latencies carry that offset, but floe's and the plain
 * subscriber's arrivals are stamped by the one probe process, so their difference does not.
 */
export function monoMs(): number {
  return performance.timeOrigin + performance.now();
}

/** When message k of each connection was written: per connection, writes as (end k exclusive, time). */
export class SendTable {
  private readonly ends: number[][];
  private readonly times: number[][];

  constructor(conns: number) {
    this.ends = Array.from({ length: conns }, () => []);
    this.times = Array.from({ length: conns }, () => []);
  }

  /** Messages up to (not including) `end` of connection `c` were written at `t` (those before in earlier writes). */
  record(c: number, end: number, t: number): void {
    this.ends[c]!.push(end);
    this.times[c]!.push(t);
  }

  /** The write time of message k of connection c; NaN when it was never written. */
  sentAt(c: number, k: number): number {
    const ends = this.ends[c];
    if (!ends || k < 0) return NaN;
    let lo = 0;
    let hi = ends.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (ends[mid]! > k) hi = mid;
      else lo = mid + 1;
    }
    return lo < ends.length ? this.times[c]![lo]! : NaN;
  }
}

export interface LatencyStat {
  /** Samples measured. */
  n: number;
  p50_ms: number;
  p99_ms: number;
  max_ms: number;
}

/** Nearest-rank percentiles of `xs` (ms, rounded to 0.01); n 0 gives zeros. */
export function latencyStat(xs: Float64Array | number[]): LatencyStat {
  const n = xs.length;
  if (n === 0) return { n: 0, p50_ms: 0, p99_ms: 0, max_ms: 0 };
  const s = Float64Array.from(xs).sort();
  const rank = (p: number) => s[Math.min(n - 1, Math.max(0, Math.ceil(p * n) - 1))]!;
  const r = (x: number) => Math.round(x * 100) / 100;
  return { n, p50_ms: r(rank(0.5)), p99_ms: r(rank(0.99)), max_ms: r(s[n - 1]!) };
}

/** Arrivals of id-carrying messages: triplets (connection, k, arrival ms) flattened. */
export function publishLatencies(arrivals: Float64Array, table: SendTable): { ms: Float64Array; unmatched: number } {
  const out = new Float64Array(arrivals.length / 3);
  let n = 0;
  let unmatched = 0;
  for (let i = 0; i + 2 < arrivals.length; i += 3) {
    const sent = table.sentAt(arrivals[i]!, arrivals[i + 1]!);
    if (Number.isNaN(sent)) unmatched++;
    else out[n++] = arrivals[i + 2]! - sent;
  }
  return { ms: out.subarray(0, n), unmatched };
}

/** Wall-clock arrivals (epoch ms) of window rows → ms since the close of the `windowMs` window before each. */
export function windowCloseLatencies(arrivals: Float64Array, windowMs: number): Float64Array {
  return arrivals.map((t) => t - Math.floor(t / windowMs) * windowMs);
}

/** `"id":"<tag>_<c>_<k>"` in a payload → [c, k], or null (another tag, no id). */
export function idOf(payload: string, tag: string): [number, number] | null {
  const head = `"id":"${tag}_`;
  const i = payload.indexOf(head);
  if (i < 0) return null;
  const from = i + head.length;
  const us = payload.indexOf("_", from);
  const q = payload.indexOf('"', from);
  if (us < 0 || q < 0 || us > q) return null;
  const c = Number(payload.slice(from, us));
  const k = Number(payload.slice(us + 1, q));
  return Number.isInteger(c) && Number.isInteger(k) ? [c, k] : null;
}

/** What a step reports: floe's sink and, for id-carrying workloads, the plain subscriber in the same run. */
export interface StepLatency {
  kind: "publish" | "window_close";
  floe: LatencyStat;
  /** The plain subscriber's arrival of the input (the floor); null for window workloads. */
  subscriber: LatencyStat | null;
  /** Arrivals whose send time is unknown (should be 0). */
  unmatched: number;
}
