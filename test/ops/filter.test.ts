/**
 * The one filter operator (WHERE, window FILTER, HAVING): a collection of many groups is filtered
 * across event-loop turns under the turn budget, with the output of one pass; each clause keeps
 * its truth rule and eKuiper's error prefix.
 */
import { expect, test } from "bun:test";
import { RowError } from "../../lib/errors.ts";
import { Collection, type Item } from "../../lib/core/item.ts";
import type { OpEnv } from "../../lib/core/operator.ts";
import type { Evaluator } from "../../lib/expr/compile.ts";
import { GroupRow, Tuple } from "../../lib/expr/row.ts";
import { FilterOp } from "../../lib/ops/filter.ts";
import type { Value } from "../../lib/value/values.ts";

const turns = () => new Promise<void>((r) => setImmediate(r));

/** `n` groups of one tuple each, `{ i }`. */
function groups(n: number): Collection {
  const c = new Collection([], { start: 0, end: 1000, trigger: 1000 } as Collection["window"]);
  c.groups = Array.from({ length: n }, (_, i) => new GroupRow([new Tuple({ i }, null, i, "s")], 1000));
  return c;
}

const keepEven: Evaluator = (r) => ((r.value("i", undefined) as number) % 2 === 0);

function op(clause: "where" | "having", env: OpEnv, cond: Evaluator) {
  const out: Item[] = [];
  const f = clause === "where" ? FilterOp.where("2_filter", env, cond) : FilterOp.having("4_having", env, cond);
  f.next = { push: (i) => void out.push(i) };
  return { f, out };
}

/** What a collection left the node as: the kept groups' `i`, or the error's message. */
function shown(items: Item[]): unknown[] {
  return items.map((i) => (i instanceof RowError ? i.message : i instanceof Collection ? i.groups!.map((g) => g.value("i", undefined)) : i));
}

test.each(["where", "having"] as const)("%s over a window of many groups is filtered across turns with the output of one pass", async (clause) => {
  const once = op(clause, { now: () => 0, sendError: true }, keepEven);
  once.f.push(groups(20_000));
  expect(once.out).toHaveLength(1);

  // A zero budget: the first slice (64 groups) and then a look at the clock, past its deadline.
  const sliced = op(clause, { now: () => 0, sendError: true, turnMs: 0 }, keepEven);
  const later = new Tuple({ i: 2 }, null, 0, "s");
  sliced.f.push(groups(20_000));
  sliced.f.push(later); // waits behind the spread collection
  expect(sliced.out).toHaveLength(0);
  let n = 0;
  while (sliced.out.length < 2 && n < 10_000) {
    await turns();
    n++;
  }
  expect(n).toBeGreaterThan(1);
  expect(shown(sliced.out)).toEqual([...shown(once.out), later]);
  expect(sliced.f.metrics.messagesProcessed).toBe(once.f.metrics.messagesProcessed + 1);
});

test("a group failing past the first slice fails the whole window, with the clause's prefix", async () => {
  const bad = (v: Value): Evaluator => (r) => (r.value("i", undefined) === 5000 ? v : true);
  for (const [clause, v, message] of [
    ["where", "x", "run Where error: invalid condition that returns non-bool value string(x)"],
    ["having", null, "run Having error: invalid condition that returns non-bool value <nil>(<nil>)"],
  ] as const) {
    const once = op(clause, { now: () => 0, sendError: true }, bad(v));
    once.f.push(groups(10_000));
    const sliced = op(clause, { now: () => 0, sendError: true, turnMs: 0 }, bad(v));
    sliced.f.push(groups(10_000));
    for (let n = 0; n < 10_000 && sliced.out.length === 0; n++) await turns();
    expect(shown(once.out)).toEqual([message]);
    expect(shown(sliced.out)).toEqual([message]);
  }
});

test("WHERE drops a null condition; HAVING fails on it", () => {
  const nul: Evaluator = () => null;
  const w = op("where", { now: () => 0, sendError: true }, nul);
  w.f.push(new Tuple({ i: 1 }, null, 0, "s"));
  expect(w.out).toHaveLength(0);
  const h = op("having", { now: () => 0, sendError: true }, nul);
  h.f.push(new Tuple({ i: 1 }, null, 0, "s"));
  expect(shown(h.out)).toEqual(["run Having error: invalid condition that returns non-bool value <nil>(<nil>)"]);
});

test("only WHERE offers its condition to a shared stream's predicate index", () => {
  const where = { kind: "bool", value: true } as unknown as Parameters<typeof FilterOp.where>[4];
  expect(FilterOp.where("2_filter", { now: () => 0, sendError: false }, keepEven, undefined, where).where).toBe(where);
  expect(FilterOp.having("4_having", { now: () => 0, sendError: false }, keepEven).where).toBeUndefined();
});
