/**
 * When the lean MQTT reader (lean-stream.ts) pauses its socket after a read, so that the next read
 * brings what arrived meanwhile (read coalescing). Every read costs the same few tens of µs (the
 * wake-up, the read, the drain's batch, the sink's write) however few messages it holds, so fast
 * arrivals read a few at a time keep the loop busy with those fixed costs; a pause of COALESCE_MS
 * turns them into one read. But each pause is also up to COALESCE_MS (a timer: ~1.1 ms in Bun) on
 * the latency of the messages that arrive in it.
 *
 * So the pause is taken only while the reads' work holds a good share of the loop: `busy`, an
 * average of the share of the time between reads spent on a read and the work it queued (the
 * drains and the sinks' encoding, which run in the microtasks after it). An engine with time to
 * spare reads each message as it comes; once reading small batches would cost it BUSY_SHARE of
 * its time or more, it pauses again, and the saving per message is kept where the CPU is needed.
 * Times are performance.now() ms, given by the caller (tests drive them).
 */

/** Messages per ms since the previous read at which a small read may be followed by a pause. */
const COALESCE_RATE = 2;
/** A read of this many messages or more means the reader is behind: it reads on. */
const COALESCE_ENOUGH = 64;
/** The pause. */
export const COALESCE_MS = 1;
/** The share of the loop the reads' work must hold before small reads are coalesced. */
export const BUSY_SHARE = 0.25;
/** Weight of the latest read in `busy` (a power of two's inverse: about the last 8 reads). */
const WEIGHT = 1 / 8;

export class ReadCoalescing {
  /** The time of the previous read (0: none yet). */
  private last = 0;
  /** The time of the read whose work is being timed, and the time since the read before it. */
  private readAt = 0;
  private interval = 0;
  /** The average share of the time between reads spent on a read's work (0–1). */
  busy = 0;

  /**
   * A read of `n` publishes at `now`: whether to pause reading for COALESCE_MS. `n` of them arrived
   * since the previous read; below COALESCE_RATE per ms a pause would gather a message or two
   * whatever its length, and a message after a quiet spell must not wait.
   */
  read(n: number, now: number): boolean {
    const since = now - this.last;
    this.last = now;
    if (n === 0) return false;
    this.readAt = now;
    this.interval = since;
    return n < COALESCE_ENOUGH && n >= COALESCE_RATE * since && this.busy >= BUSY_SHARE;
  }

  /** The work of the last read with publishes (its admission and what that queued) ended at `now`. */
  worked(now: number): void {
    const work = now - this.readAt;
    // The time between this read and the one before it, or the work itself when that was longer
    // (a read whose work outlasted the gap before it held the loop the whole time).
    const span = Math.max(this.interval, work);
    const share = span > 0 ? work / span : 0;
    this.busy += (share - this.busy) * WEIGHT;
  }
}
