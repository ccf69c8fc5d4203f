/** The operator boundary: whatever an item makes a node throw fails that item only, with a message. */
import { expect, test } from "bun:test";
import { RowError } from "../../lib/errors.ts";
import type { Item } from "../../lib/core/item.ts";
import { Operator } from "../../lib/core/operator.ts";

class Thrower extends Operator {
  constructor(private readonly failing: (n: number) => unknown) {
    super("3_project", { now: () => 1000, sendError: true }, "run Select error: ");
  }
  protected process(item: Item): void {
    const err = this.failing(item as unknown as number);
    if (err !== undefined) throw err;
    this.emit(item);
  }
}

const deep = (n: number): number => (n === 0 ? 0 : 1 + deep(n - 1));

const cases: [string, () => unknown, string][] = [
  ["a RowError", () => new RowError("boom"), "run Select error: boom"],
  ["an engine bug (TypeError)", () => new TypeError("x is not a function"), "run Select error: TypeError: x is not a function"],
  ["an Error without a message (named by its class)", () => new Error(""), "run Select error: Error"],
  ["a thrown string", () => "oops", "run Select error: oops"],
  ["an empty thrown string (\"unknown error\")", () => "", "run Select error: unknown error"],
];
test.each(cases)("%s fails its item, counted; the next item goes through", (_label, make, message) => {
  const out: unknown[] = [];
  const op = new Thrower((n) => (n === 1 ? make() : undefined));
  op.next = { push: (i) => void out.push(i) };
  for (const n of [1, 2]) op.push(n as unknown as Item);
  expect(op.metrics.exceptions).toBe(1);
  expect(op.metrics.lastException).toBe(message);
  // sendError forwards the failure, then the good item follows.
  expect(out.length).toBe(2);
  expect((out[0] as RowError).message).toBe(message);
  expect(out[1]).toBe(2);
});

test("a stack overflow in a node is a counted failure with its message, not the rule's end", () => {
  const op = new Thrower((n) => (n === 1 ? void deep(1e7) : undefined));
  const out: unknown[] = [];
  op.next = { push: (i) => void out.push(i) };
  op.push(1 as unknown as Item);
  op.push(2 as unknown as Item);
  expect(op.metrics.exceptions).toBe(1);
  expect(op.metrics.lastException).toMatch(/^run Select error: RangeError: Maximum call stack size exceeded/);
  expect(out.at(-1)).toBe(2);
});
