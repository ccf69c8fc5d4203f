/**
 * Shapes of the data between graph nodes (graph-rules.md §6.1, checked in §2 step 6): a row or a collection,
 * from one emitter or merged by a join, grouped or not. Each operator checks the shapes of its
 * inputs with eKuiper's messages and says the shape of its output.
 */
import { fail, type NodeDef } from "./graph-doc.ts";
import type { StreamDef } from "./streams.ts";

export type Shape = { row: boolean; merged: boolean; grouped: boolean };

/** What a source emits: single-emitter rows. */
export const rowShape = (): Shape => ({ row: true, merged: false, grouped: false });

/**
 * The input shape node `n` plans with and the shape it emits, from its inputs' shapes; `built`
 * holds what the source nodes planned to (a table's definition), so that tables are left out.
 */
export function checkShape(n: NodeDef, ins: (readonly [string, Shape])[], built: ReadonlyMap<string, object>): { in: Shape; out: Shape } {
  const k = n.nodeType.toLowerCase();
  // Lookup-table sources feed a join without a shape of their own.
  const streamIns = ins.filter(([i]) => {
    const b = built.get(i);
    return !(b && "kind" in b && (b as StreamDef).kind === "table" && !("helpers" in b));
  });
  const list = streamIns.length ? streamIns : ins;
  if (k === "join" && n.nodeType === "join" && list.length > 1) throw fail(`join node ${n.name} does not allow multiple stream inputs`);
  const first = list[0]?.[1] ?? { row: true, merged: false, grouped: false };
  const mismatch = (up: string, reason: string) => fail(`node ${up} output does not match node ${n.name} input: ${reason}`);
  const kindOf = (s: Shape) => (s.row ? "row" : "collection");
  for (const [up, s] of list) {
    switch (k) {
      case "watermark":
      case "window":
        if (!s.row) throw mismatch(up, `input type mismatch, expect row, got ${kindOf(s)}`);
        if (s.merged) throw mismatch(up, "row type mismatch, expect single emitter row, got merged row");
        break;
      case "join":
        if (s.grouped) throw mismatch(up, "collection type mismatch, expect non-grouped collection, got grouped collection");
        if (s.merged) throw mismatch(up, "row type mismatch, expect single emitter row, got merged row");
        break;
      case "groupby":
        if (s.row) throw mismatch(up, `input type mismatch, expect collection, got row`);
        if (s.grouped) throw mismatch(up, "collection type mismatch, expect non-grouped collection, got grouped collection");
        break;
      case "aggfunc":
      case "orderby":
        if (s.row) throw mismatch(up, `input type mismatch, expect collection, got row`);
        break;
      case "function":
        if (s.grouped) throw mismatch(up, "collection type mismatch, expect non-grouped collection, got grouped collection");
        break;
    }
  }
  let out: Shape = first;
  if (k === "window") out = { row: false, merged: false, grouped: false };
  else if (k === "join") out = { row: false, merged: true, grouped: false };
  else if (k === "groupby" || k === "aggfunc") out = { row: false, merged: first.merged, grouped: true };
  return { in: first, out };
}
