/**
 * What the parked members of a drain group (drain-group.ts) count together. A parked member's
 * nodes would count exactly what the group's leader recorded (shared-eval.ts) and what the
 * predicate index spared it: the same for every member. So the group counts it once, here, and
 * each member adds what was counted since it last looked (`Mark`) when its counts are read, when
 * it unparks and when its run fails: a message costs the group one count, not one per member.
 *
 * Counts are per node of the group's chain (decoder → WHERE → SELECT): records in, out and
 * processed, with the time and latency sample of each node's last count; `msgs` counts the
 * messages taken. A member's shared source node (eKuiper's one node per shared stream, shown by
 * every rule) is not counted here: it is read through any rule, so the member counting it replays
 * eagerly (DrainGroup's eager members).
 */

/** A member's view of the tally: what it has counted of it so far. Shared by every member that looked at the same time. */
export class Mark {
  constructor(
    readonly counts: Float64Array,
    readonly msgs: number,
  ) {}
}

const NONE = new Mark(new Float64Array(0), 0);

export class GroupTally {
  /** Per node: records in, out, processed (summed since the group began). */
  private counts: Float64Array = new Float64Array(0);
  /** Per node: the time of its last count and its last latency sample (-1: none). */
  private times: Float64Array = new Float64Array(0);
  private latency: Float64Array = new Float64Array(0);
  /** Messages taken (replayed or spared by the index). */
  private msgs = 0;
  /** The mark of the current counts, made when a member asks (undefined: the counts changed since). */
  private mark: Mark | undefined = NONE;

  private ensure(len: number): void {
    if (this.times.length >= len) return;
    const grow = (a: Float64Array, n: number, fill: number): Float64Array => {
      const b = new Float64Array(n).fill(fill);
      b.set(a);
      return b;
    };
    this.counts = grow(this.counts, len * 3, 0);
    this.times = grow(this.times, len, 0);
    this.latency = grow(this.latency, len, -1);
  }

  /** A batch of `n` messages the leader recorded at `now`: `counts` per node (in, out, processed), `latency` its last samples. */
  add(counts: Float64Array, latency: Float64Array, n: number, now: number): void {
    const len = latency.length;
    this.ensure(len);
    const c = this.counts;
    for (let i = 0; i < len; i++) {
      const dIn = counts[i * 3]!;
      if (dIn === 0) continue;
      c[i * 3] += dIn;
      c[i * 3 + 1] += counts[i * 3 + 1]!;
      c[i * 3 + 2] += counts[i * 3 + 2]!;
      this.times[i] = now;
      // The decoder node's latency is each member's own read of the decode's (the drain's).
      if (i > 0) this.latency[i] = latency[i]!;
    }
    this.msgs += n;
    this.mark = undefined;
  }

  /** A message the predicate index spared the group at `now`: decoded (in, out), rejected by the WHERE (in). */
  skip(now: number): void {
    this.ensure(2);
    const c = this.counts;
    c[0]++;
    c[1]++;
    c[2]++;
    c[3]++;
    c[5]++;
    this.times[0] = now;
    this.times[1] = now;
    this.msgs++;
    this.mark = undefined;
  }

  /** What a member that looks now has counted. */
  now(): Mark {
    return (this.mark ??= new Mark(this.counts.slice(), this.msgs));
  }

  /** The first mark: nothing counted. */
  static readonly start = NONE;

  /**
   * Adds to `nodes` what was counted since `from` (`apply` false: nothing, the member's run has
   * stopped counting); returns the messages taken since, and the member's new mark.
   */
  catchUp(from: Mark, nodes: readonly NodeCounts[], apply: boolean): { msgs: number; mark: Mark } {
    const to = this.now();
    if (to === from) return { msgs: 0, mark: to };
    if (!apply) return { msgs: 0, mark: to };
    const a = from.counts;
    const b = to.counts;
    for (let i = 0; i < nodes.length && i * 3 < b.length; i++) {
      const dIn = b[i * 3]! - (a[i * 3] ?? 0);
      if (dIn === 0) continue;
      const n = nodes[i]!;
      n.recordsIn += dIn;
      n.recordsOut += b[i * 3 + 1]! - (a[i * 3 + 1] ?? 0);
      n.messagesProcessed += b[i * 3 + 2]! - (a[i * 3 + 2] ?? 0);
      n.lastInvocation = this.times[i]!;
      if (i > 0 && this.latency[i]! >= 0) n.processLatencyUs = this.latency[i]!;
    }
    return { msgs: to.msgs - from.msgs, mark: to };
  }
}

/** The counters of a node a member catches up (core/metrics.ts NodeMetrics). */
export interface NodeCounts {
  recordsIn: number;
  recordsOut: number;
  messagesProcessed: number;
  lastInvocation: number;
  processLatencyUs: number;
}
