/** A node's errors grouped by message, with bounded previews of the records that caused them. */
import { expect, test } from "bun:test";
import { bytesPreview, ErrorGroups, MAX_GROUPS, PAYLOAD_BYTES, valuePreview } from "../../lib/core/error-groups.ts";
import { NodeMetrics } from "../../lib/core/metrics.ts";
import { Tuple } from "../../lib/expr/row.ts";

test("the same message counts in one group with its first and last time and the last payload", () => {
  const m = new NodeMetrics("op", "2_filter");
  for (let i = 1; i <= 15; i++) {
    m.exception("invalid operation string(a) > int64(1)", i * 1000);
    m.attachPayload(`{"n":${i}}`);
  }
  m.exception("other", 20_000);
  expect(m.exceptions).toBe(16);
  expect(m.errorGroups!.list()).toEqual([
    { message: "other", count: 1, first: 20_000, last: 20_000, payload: "" },
    { message: "invalid operation string(a) > int64(1)", count: 15, first: 1000, last: 15_000, payload: '{"n":15}' },
  ]);
});

test("a node keeps at most MAX_GROUPS messages: the one seen longest ago goes first", () => {
  const g = new ErrorGroups();
  for (let i = 0; i < MAX_GROUPS; i++) g.add(`e${i}`, i);
  g.add("e0", 100); // seen again: now the most recent
  g.add("new", 101);
  const names = g.list().map((x) => x.message);
  expect(names.length).toBe(MAX_GROUPS);
  expect(names.slice(0, 2)).toEqual(["new", "e0"]);
  expect(names).not.toContain("e1");
});

test("previews are JSON of the record's columns, cut at the fixed byte cap", () => {
  expect(valuePreview(new Tuple({ a: 1, s: "x", b: 2n, arr: [true, null] }, null, 0, "demo"))).toBe('{"a":1,"s":"x","b":2,"arr":[true,null]}');
  const big = valuePreview(new Tuple({ s: "é".repeat(10_000), more: Array.from({ length: 10_000 }, (_, i) => i) }, null, 0, "demo"));
  expect(new TextEncoder().encode(big).length).toBeLessThanOrEqual(PAYLOAD_BYTES);
  expect(big.endsWith("…")).toBe(true);
  const wide = valuePreview(Object.fromEntries(Array.from({ length: 5000 }, (_, i) => [`k${i}`, i])));
  expect(new TextEncoder().encode(wide).length).toBeLessThanOrEqual(PAYLOAD_BYTES);
  const raw = bytesPreview(new Uint8Array(4096).fill(0x61));
  expect(raw.length).toBe(PAYLOAD_BYTES - 2);
  expect(bytesPreview(new TextEncoder().encode("{bad json"))).toBe("{bad json");
});
