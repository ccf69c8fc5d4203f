/**
 * A collection's ownership (core/item.ts): a node spreading one across turns holds a loan while it
 * keeps the rows (and so does every lent item waiting behind it), and handles transient rows to the
 * end within their push.
 */
import { expect, test } from "bun:test";
import { Collection, OWNED, TRANSIENT, type Item, type Loan, type Ownership } from "../../lib/core/item.ts";
import { Operator } from "../../lib/core/operator.ts";
import { Tuple } from "../../lib/expr/row.ts";

/** Counts a collection's rows across turns (a zero budget: a look at the clock after 64 rows ends the turn). */
class Counter extends Operator {
  constructor() {
    super("3_project", { now: () => 0, sendError: true, turnMs: 0 }, "");
  }
  protected process(item: Item): void {
    if (!(item instanceof Collection)) return;
    let n = 0;
    this.spreadRows(item.ownership, item.rows.length, () => void n++, () => this.emit(item.derive(new Array(n))));
  }
}

function collection(n: number, own: Ownership): Collection {
  const c = new Collection(Array.from({ length: n }, (_, i) => new Tuple({ i }, null, i, "s")), null);
  c.ownership = own;
  return c;
}

const turns = () => new Promise<void>((r) => setImmediate(r));

test("a lent collection spread across turns holds its loan until done; lent items waiting behind it hold it too", async () => {
  const op = new Counter();
  const out: Collection[] = [];
  op.next = { push: (i) => void out.push(i as Collection) };
  const loan: Loan = { kind: "loan", held: 0 };
  op.push(collection(1000, loan));
  expect(out).toHaveLength(0);
  expect(loan.held).toBe(1);
  op.push(collection(10, loan));
  expect(loan.held).toBe(2);
  for (let i = 0; i < 1000 && out.length < 2; i++) await turns();
  expect(out.map((c) => c.rows.length)).toEqual([1000, 10]);
  expect(out[0]!.ownership).toBe(loan); // derived: carried on
  expect(loan.held).toBe(0);
});

test("a transient collection is handled within its push; an owned one holds nothing", async () => {
  const op = new Counter();
  const out: Collection[] = [];
  op.next = { push: (i) => void out.push(i as Collection) };
  op.push(collection(1000, TRANSIENT));
  expect(out.map((c) => c.rows.length)).toEqual([1000]);
  expect(out[0]!.ownership).toBe(TRANSIENT);
  op.push(collection(1000, OWNED));
  expect(out).toHaveLength(1);
  for (let i = 0; i < 1000 && out.length < 2; i++) await turns();
  expect(out.map((c) => c.rows.length)).toEqual([1000, 1000]);
  expect(new Collection([], null).ownership).toBe(OWNED);
});
