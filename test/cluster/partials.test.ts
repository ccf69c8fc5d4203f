/** cluster/partials.ts: the merge's completeness gate and the signed partial messages (no NATS needed). */
import { expect, test } from "bun:test";
import { EntrySigner } from "../../lib/cluster/auth.ts";
import { decodePartial, PartialGate } from "../../lib/cluster/partials.ts";

test("a window is released once every partition has closed it, with the partitions' rows in partition order", () => {
  const g = new PartialGate(3);
  expect(g.add(2, 10, [{ k: "a", n: 1n }])).toEqual([]);
  expect(g.add(0, 10, [{ k: "a", n: 2n }])).toEqual([]);
  expect(g.waiting()).toBe(1);
  expect(g.add(1, 10, [{ k: "b", n: 3n }])).toEqual([{ end: 10, rows: [{ k: "a", n: 2n }, { k: "b", n: 3n }, { k: "a", n: 1n }] }]);
  expect(g.waiting()).toBe(0);
});

test("a partition's partial of a later window also closes the earlier windows it had no rows in", () => {
  const g = new PartialGate(2);
  expect(g.add(0, 10, [{ k: "a" }])).toEqual([]);
  expect(g.add(0, 20, [{ k: "b" }])).toEqual([]);
  // Partition 1 had nothing in window 10; its window 30 says it closed 10 and 20 too.
  expect(g.add(1, 30, [{ k: "c" }])).toEqual([
    { end: 10, rows: [{ k: "a" }] },
    { end: 20, rows: [{ k: "b" }] },
  ]);
  // An empty marker closes a window as a partial does.
  expect(g.add(0, 30, [])).toEqual([{ end: 30, rows: [{ k: "c" }] }]);
});

test("a repeated partial (a replay, a new owner's recomputation) changes nothing", () => {
  const g = new PartialGate(2);
  g.add(0, 10, [{ k: "a", n: 1n }]);
  g.add(0, 10, [{ k: "a", n: 1n }]);
  expect(g.add(1, 10, [{ k: "a", n: 5n }])).toEqual([{ end: 10, rows: [{ k: "a", n: 1n }, { k: "a", n: 5n }] }]);
  // After the release: ignored.
  expect(g.add(1, 10, [{ k: "a", n: 5n }])).toEqual([]);
  expect(g.add(0, 10, [{ k: "x" }])).toEqual([]);
  expect(g.waiting()).toBe(0);
  // A partition out of range is ignored.
  expect(g.add(7, 20, [{ k: "a" }])).toEqual([]);
  expect(g.add(-1, 20, [{ k: "a" }])).toEqual([]);
});

test("no window is released while a partition has sent nothing", () => {
  const g = new PartialGate(2);
  for (let e = 10; e <= 50; e += 10) expect(g.add(0, e, [{ e: BigInt(e) }])).toEqual([]);
  expect(g.waiting()).toBe(5);
});

const signer = new EntrySigner(new TextEncoder().encode("a-test-group-secret-of-16+"));

function message(subject: string, p: number, end: number, rows: unknown[], mac?: string): string {
  const content = JSON.stringify({ p, e: 1, end, rows });
  return JSON.stringify({ c: content, h: mac ?? signer.sign(`${subject}/${p}.${end}`, content) });
}

test("partials keep int and float kinds and are refused without the group's signature or under another key", () => {
  const subject = "floe.g.partial.cg.abc";
  const rows = [["o", [["k", ["s", "d1"]], ["n", ["i", "9007199254740993"]], ["f", ["f", "2"]], ["z", ["n", null]], ["b", ["b", true]]]]];
  expect(decodePartial(signer, subject, message(subject, 1, 10, rows))).toEqual({ p: 1, epoch: 1, end: 10, rows: [{ k: "d1", n: 9007199254740993n, f: 2, z: null, b: true }] });
  const decoded = decodePartial(signer, subject, message(subject, 1, 10, rows));
  if (typeof decoded === "string") throw new Error(decoded);
  expect(typeof decoded.rows[0]!.f).toBe("number");
  expect(decodePartial(signer, subject, message(subject, 1, 10, rows, "forged"))).toBe("no valid signature of the group secret");
  // Signed for partition 1, claimed as partition 2's.
  const moved = JSON.parse(message(subject, 1, 10, rows)) as { c: string; h: string };
  const c = JSON.parse(moved.c) as Record<string, unknown>;
  c.p = 2;
  expect(decodePartial(signer, subject, JSON.stringify({ c: JSON.stringify(c), h: moved.h }))).toBe("no valid signature of the group secret");
  expect(decodePartial(signer, "floe.g.partial.other.abc", message(subject, 1, 10, rows))).toBe("no valid signature of the group secret");
  expect(decodePartial(signer, subject, "{")).toBe("not JSON");
  expect(decodePartial(signer, subject, JSON.stringify({ c: JSON.stringify({ p: "1" }), h: "" }))).toBe("malformed partial");
});
