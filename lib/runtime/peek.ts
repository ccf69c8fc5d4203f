/**
 * A data peek on a running rule (the console's "show data"): while it is on, every node's output
 * passes a tap that keeps a bounded preview of the last few items it pushed, sampled — at most
 * one item per PEEK_EVERY_MS per node, PEEK_ROWS kept, each cut at the preview's byte cap
 * (core/error-groups.ts). Off, the rule runs its plain wiring (Topology.peek puts it back): a
 * rule nobody peeks at pays nothing.
 */
import { valuePreview } from "../core/error-groups.ts";
import { Watermark, type Consumer, type Item } from "../core/item.ts";

export const PEEK_ROWS = 5;
export const PEEK_EVERY_MS = 200;

export interface PeekRow {
  /** ms */
  readonly t: number;
  readonly data: string;
}

class PeekNode {
  /** Items that passed since the peek started (sampled or not). */
  seen = 0;
  at = 0;
  /** A ring of the last PEEK_ROWS samples; `next` is where the next one goes. */
  readonly ring: PeekRow[] = [];
  next = 0;

  rows(): PeekRow[] {
    return [...this.ring.slice(this.next), ...this.ring.slice(0, this.next)];
  }
}

class PeekTap implements Consumer {
  constructor(
    readonly inner: Consumer,
    private readonly node: PeekNode,
  ) {}

  push(item: Item): void {
    if (!(item instanceof Watermark)) {
      const n = this.node;
      n.seen++;
      const now = Date.now();
      if (now - n.at >= PEEK_EVERY_MS) {
        n.at = now;
        n.ring[n.next] = { t: now, data: valuePreview(item) };
        n.next = (n.next + 1) % PEEK_ROWS;
      }
    }
    this.inner.push(item);
  }
}

/** The taps of one peek, by node (`source_<s>`, `op_<name>`): what each node pushed out. */
export class Peek {
  private readonly nodes = new Map<string, PeekNode>();

  /** A tap in front of `inner` recording what node `name` pushes. */
  tap(name: string, inner: Consumer): Consumer {
    let n = this.nodes.get(name);
    if (!n) this.nodes.set(name, (n = new PeekNode()));
    return new PeekTap(inner, n);
  }

  /** What each node pushed out: how many items since the start, and the sampled last few (copies). */
  snapshot(): Record<string, { seen: number; rows: PeekRow[] }> {
    const out: Record<string, { seen: number; rows: PeekRow[] }> = {};
    for (const [name, n] of this.nodes) out[name] = { seen: n.seen, rows: n.rows() };
    return out;
  }
}
