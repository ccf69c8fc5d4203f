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
 */
import type { JsDelivery, PullReader } from "./consumer.ts";

export class AckWindow {
  private q: JsDelivery[] = [];
  private head = 0;
  private readonly held = new Set<number>();
  /** Deliveries admitted so far. */
  admitted = 0;
  /** Deliveries acknowledged so far (always the oldest admitted ones). */
  acked = 0;
  /** The highest stream sequence acknowledged (or covered by a restored checkpoint). */
  takenSeq = 0;
  private mark = 0;
  private markSeq = 0;

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
    return this.held.has(seq);
  }

  /** Appends deliveries the rule admitted (in order). */
  admit(ds: readonly JsDelivery[]): void {
    for (let i = 0; i < ds.length; i++) {
      const d = ds[i]!;
      this.q.push(d);
      this.held.add(d.seq);
    }
    this.admitted += ds.length;
  }

  /** Acknowledges the deliveries admitted before position `upTo`. */
  ackThrough(upTo: number, reader: PullReader): void {
    const n = Math.min(upTo, this.admitted) - this.acked;
    if (n <= 0) return;
    const q = this.q;
    const end = this.head + n;
    for (let i = this.head; i < end; i++) {
      const d = q[i]!;
      this.held.delete(d.seq);
      if (d.seq > this.takenSeq) this.takenSeq = d.seq;
      if (!this.ackAll) reader.ack(d);
    }
    if (this.ackAll) reader.ack(q[end - 1]!);
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
    let seq = this.takenSeq;
    const q = this.q;
    const end = this.head + (this.mark - this.acked);
    for (let i = this.head; i < end; i++) if (q[i]!.seq > seq) seq = q[i]!.seq;
    this.markSeq = seq;
    return seq;
  }

  /** The checkpoint of the last `markConsumed` is stored: acknowledges what it covers. */
  ackMark(reader: PullReader): void {
    this.ackThrough(this.mark, reader);
    if (this.markSeq > this.takenSeq) this.takenSeq = this.markSeq;
  }

  /** Resets every waiting delivery's ackWait timer (+WPI). */
  keepAlive(reader: PullReader): void {
    const q = this.q;
    for (let i = this.head; i < q.length; i++) reader.working(q[i]!);
  }

  /** Gives every waiting delivery back for redelivery now (NAK) and forgets them. */
  release(reader: PullReader): void {
    const q = this.q;
    for (let i = this.head; i < q.length; i++) reader.nak(q[i]!);
    this.q = [];
    this.head = 0;
    this.held.clear();
  }
}
