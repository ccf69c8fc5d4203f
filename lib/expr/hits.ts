/**
 * State of the global hit functions (functions §2): `last_hit_count/time` and
 * `last_agg_hit_count/time`. When WHERE (resp. HAVING) holds one, every such call only reads a
 * shared state that advances each time the clause passes; otherwise each call site advances its
 * own state on every evaluation.
 */
export class HitState {
  count = 0;
  time = 0;
  /** While the passing item travels downstream, readers see the values from before the pass. */
  private frozen = false;
  private seenCount = 0;
  private seenTime = 0;

  /** Records `passes` hits (the last at `time`), then runs `downstream` with the old values visible. */
  pass(passes: number, time: number, downstream: () => void): void {
    this.seenCount = this.count;
    this.seenTime = this.time;
    this.count += passes;
    this.time = time;
    this.frozen = true;
    try {
      downstream();
    } finally {
      this.frozen = false;
    }
  }

  /** Own-state mode: returns nothing, just counts one hit at `time`. */
  advance(time: number): void {
    this.count++;
    this.time = time;
  }

  readCount(): number {
    return this.frozen ? this.seenCount : this.count;
  }

  readTime(): number {
    return this.frozen ? this.seenTime : this.time;
  }
}

export interface Hits {
  /** Shared state of last_hit_* when WHERE holds one (clause mode). */
  readonly row?: HitState;
  /** Shared state of last_agg_hit_* when HAVING holds one. */
  readonly agg?: HitState;
}

export const ROW_HIT_FUNCS = new Set(["last_hit_count", "last_hit_time"]);
export const AGG_HIT_FUNCS = new Set(["last_agg_hit_count", "last_agg_hit_time"]);
