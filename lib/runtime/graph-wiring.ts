/**
 * The pieces a graph rule's DAG needs beyond the SQL chain (graph-rules.md §3, §5): a fan-out to
 * several consumers, and the adapter in front of a sink that turns what a node emits (a row, a
 * collection, groups) into the emission a sink encodes.
 */
import { Tuple } from "../expr/row.ts";
import type { Obj } from "../value/values.ts";
import { Collection, Emission, Watermark, type Consumer, type Item } from "../core/item.ts";
import type { SinkNode } from "../core/sink.ts";

/** Pushes every item to each consumer, in edge order. */
export class FanOutAll implements Consumer {
  constructor(readonly targets: Consumer[]) {}
  push(item: Item): void {
    const l = this.targets;
    for (let i = 0; i < l.length; i++) l[i]!.push(item);
  }
}

/** What a sink receives from a graph node: one object per row, or per group once aggregated. */
export function graphSinkInput(sink: SinkNode): Consumer {
  return new GraphSinkInput(sink);
}

export class GraphSinkInput implements Consumer {
  constructor(readonly sink: SinkNode) {}
  push(item: Item): void {
    const sink = this.sink;
    if (item instanceof Watermark) return;
    if (item instanceof Tuple) {
      sink.push(new Emission([item.data], item.meta));
      return;
    }
    if (item instanceof Collection) {
      const src = item.groups ?? item.rows;
      if (src.length === 0) return;
      const rows: Obj[] = new Array(src.length);
      for (let i = 0; i < src.length; i++) rows[i] = src[i]!.columns(undefined);
      sink.push(new Emission(rows, src[0]!.metadata(undefined)));
      return;
    }
    sink.push(item);
  }
}
