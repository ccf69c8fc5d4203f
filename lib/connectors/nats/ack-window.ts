/**
 * The JetStream deliveries a reader has admitted to its rule and not acknowledged yet, in
 * admission order, with what acknowledging needs: position counters (how many were admitted,
 * how many acknowledged), the stream sequences still held (a redelivery of one is skipped), and
 * the highest sequence taken (a checkpoint covers every sequence up to it when the reader is the
 * consumer's only one and reads in order).
 *
 * Positions count deliveries since the window was made: `ackThrough(p)` acknowledges the first
 * `p` admitted. A source acknowledging when its rule takes a message passes `admitted - backlog`;
 * one acknowledging at checkpoints passes the position `mark` recorded when the checkpoint read
 * its offset.
 *
 * Nothing is kept per delivery beyond the queue: while the deliveries held are in ascending stream
 * order (a consumer's only reader, in order), whether a sequence is held is a binary search, and
 * the highest sequence of a run of them is its last. Only a window that admitted a sequence below
 * one it holds (a redelivery that came back late) keeps a set of the held sequences, until it empties.
 */
import type { JsDelivery, PullReader } from "./consumer.ts";

export class AckWindow {
  private q: JsDelivery[] = [];
  private head = 0;
  /** The sequences held, once they are not in ascending order (else undefined: `q` is sorted). */
  private held: Set<number> | undefined;
  /** Deliveries admitted so far. */
  admitted = 0;
  /** Deliveries acknowledged so far (always the oldest admitted ones). */
  acked = 0;
  /** The highest stream sequence acknowledged (or covered by a restored checkpoint). */
  takenSeq = 0;
  private mark = 0;
  private markSeq = 0;
  /**
   * The batches still waiting, in admission order: the position after each and when the server's
   * ackWait timer of its deliveries last started (their delivery, or the last +WPI sent them).
   */
  private times: { end: number; at: number }[] = [];

  constructor(
    /** `ackPolicy: all`: the last acknowledgement of a run covers the earlier ones. */
    private readonly ackAll: boolean,
  ) {}

  /** Deliveries admitted and not acknowledged. */
  get pending(): number {
    return this.q.length - this.head;
  }

  /** Whether a delivery of stream sequence `seq` is admitted and waiting for its acknowledgement. */
  holds(seq: number): boolean {
    if (this.held) return this.held.has(seq);
    const q = this.q;
    let lo = this.head;
    let hi = q.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      const s = q[mid]!.seq;
      if (s === seq) return true;
      if (s < seq) lo = mid + 1;
      else hi = mid - 1;
    }
    return false;
  }

  /** Appends deliveries the rule admitted (in order), delivered by the server at `deliveredAt` (ms) or later. */
  admit(ds: readonly JsDelivery[], deliveredAt = Date.now()): void {
    const q = this.q;
    if (this.head === q.length) {
      // Empty: sorted again.
      this.q = [];
      this.head = 0;
      this.held = undefined;
    }
    for (let i = 0; i < ds.length; i++) {
      const d = ds[i]!;
      const held = this.held;
      if (held) held.add(d.seq);
      else if (this.q.length > this.head && d.seq <= this.q[this.q.length - 1]!.seq) {
        // Out of order: from now on (until the window empties) a set answers `holds`.
        const set = new Set<number>();
        for (let j = this.head; j < this.q.length; j++) set.add(this.q[j]!.seq);
        set.add(d.seq);
        this.held = set;
      }
      this.q.push(d);
    }
    this.admitted += ds.length;
    if (ds.length > 0) this.times.push({ end: this.admitted, at: deliveredAt });
  }

  /** Where in `q[from, to)` (to > from) the highest sequence is. */
  private highest(from: number, to: number): number {
    const q = this.q;
    if (!this.held) return to - 1;
    let at = from;
    for (let i = from + 1; i < to; i++) if (q[i]!.seq > q[at]!.seq) at = i;
    return at;
  }

  /** Acknowledges the deliveries admitted before position `upTo`. */
  ackThrough(upTo: number, reader: PullReader): void {
    const n = Math.min(upTo, this.admitted) - this.acked;
    if (n <= 0) return;
    const q = this.q;
    const end = this.head + n;
    const top = q[this.highest(this.head, end)]!;
    if (top.seq > this.takenSeq) this.takenSeq = top.seq;
    const held = this.held;
    if (held) for (let i = this.head; i < end; i++) held.delete(q[i]!.seq);
    // AckAll covers every stream sequence up to the one acknowledged: the highest of the run (the
    // last, unless a redelivery of a lower one was admitted after it).
    if (this.ackAll) reader.ack(top);
    else for (let i = this.head; i < end; i++) reader.ack(q[i]!);
    this.head = end;
    this.acked += n;
    // Compacted now and then, never shifted per message.
    if (this.head > 1024 && this.head * 2 > q.length) {
      this.q = q.slice(this.head);
      this.head = 0;
    }
  }

  /**
   * A checkpoint is being taken and the rule has consumed all but `unconsumed` of what was
   * admitted: remembers that position and returns the highest stream sequence it covers.
   */
  markConsumed(unconsumed: number): number {
    this.mark = this.admitted - unconsumed;
    const end = this.head + (this.mark - this.acked);
    const seq = end > this.head ? Math.max(this.takenSeq, this.q[this.highest(this.head, end)]!.seq) : this.takenSeq;
    this.markSeq = seq;
    return seq;
  }

  /** The checkpoint of the last `markConsumed` is stored: acknowledges what it covers. */
  ackMark(reader: PullReader): void {
    this.ackThrough(this.mark, reader);
    if (this.markSeq > this.takenSeq) this.takenSeq = this.markSeq;
  }

  /**
   * Resets the ackWait timer (+WPI) of every waiting delivery whose timer started at `before` (ms)
   * or earlier: all of them by default. A source acknowledging at checkpoints calls this every
   * quarter of ackWait with "half an ackWait ago": a delivery gets its +WPI between half and three
   * quarters of its ackWait, and only when it waited that long — what a checkpoint acknowledges
   * within half an ackWait of its delivery (nearly everything) costs no message at all.
   */
  keepAlive(reader: PullReader, before = Infinity): void {
    const q = this.q;
    const times = this.times;
    // Batches already acknowledged are forgotten.
    let gone = 0;
    while (gone < times.length && times[gone]!.end <= this.acked) gone++;
    if (gone > 0) times.splice(0, gone);
    const now = Date.now();
    let from = this.acked;
    for (const t of times) {
      if (t.at <= before) {
        const end = this.head + (t.end - this.acked);
        for (let i = this.head + (from - this.acked); i < end; i++) reader.working(q[i]!);
        t.at = now;
      }
      from = t.end;
    }
  }

  /** Gives every waiting delivery back for redelivery now (NAK) and forgets them. */
  release(reader: PullReader): void {
    const q = this.q;
    for (let i = this.head; i < q.length; i++) reader.nak(q[i]!);
    this.q = [];
    this.head = 0;
    this.held = undefined;
    this.times = [];
  }
}
