/** Trace trees in tests: the first span of a name, depth first. */
import type { TraceNode } from "../../lib/runtime/trace/store.ts";

export function findSpan(n: TraceNode, name: string): TraceNode | undefined {
  if (n.name === name) return n;
  for (const c of n.ChildSpan) {
    const f = findSpan(c, name);
    if (f) return f;
  }
  return undefined;
}
