/**
 * Sliced encoding in the sink pipeline: one result fanning out into more than SLICE
 * outputs is encoded a slice at a time with the event loop running in between; the order of
 * every output (later results queue behind the backlog), the payloads and the back-pressure
 * (`room()` counts the backlog) are what one synchronous pass gave. Without `sendSingle` a window
 * is one JSON array: its payload is built row by row across slices, byte-identical to one pass.
 */
import { expect, test } from "bun:test";
import { Emission } from "../../lib/core/item.ts";
import { IoError, RowError } from "../../lib/errors.ts";
import { parseSinkCommon } from "../../lib/sink/common.ts";
import type { SinkConnector, SinkItem } from "../../lib/sink/connector.ts";
import { SLICE_OUTPUTS as SLICE, SLICE_ROWS } from "../../lib/core/turn.ts";
import type { SinkPipeline } from "../../lib/sink/pipeline.ts";
import { openPipeline } from "../helpers/sink.ts";
import { encodeGoJson } from "../../lib/value/json-encode.ts";
import { compileTemplate } from "../../lib/template/index.ts";
import { createEncoder } from "../../lib/formats/encode.ts";
import type { Obj, Value } from "../../lib/value/values.ts";

class Collect implements SinkConnector {
  readonly bytes = true;
  readonly got: string[] = [];
  readonly props: unknown[] = [];
  readonly traces: (string | null)[] = [];
  /** Sends that fail (IoError) before the next one succeeds. */
  failures = 0;
  open(): void {}
  send(item: SinkItem): void {
    if (this.failures > 0) {
      this.failures--;
      throw new IoError("down");
    }
    this.got.push(item.payload as string);
    this.props.push(item.props);
    this.traces.push(item.traceparent);
  }
  close(): void {}
}

function pipeline(props: Record<string, unknown> = {}, conn = new Collect()) {
  return { p: openPipeline("collect", conn, props), conn };
}

const rows = (from: number, n: number) => Array.from({ length: n }, (_, i) => ({ i: from + i }));
const until = async (cond: () => boolean) => {
  for (let i = 0; i < 2000 && !cond(); i++) await new Promise((r) => setImmediate(r));
  expect(cond()).toBe(true);
};

test("a big emission is encoded in slices, the loop runs between them, and order is kept", async () => {
  const { p, conn } = pipeline();
  const big = SLICE * 8 + 5;
  const room0 = p.room();
  p.push(new Emission(rows(0, big), null));
  // Nothing was transformed in the push (Transformer.plainSingle): every row waits and counts against room.
  expect(p.queued).toBe(big);
  expect(p.room()).toBeLessThan(room0 - big + SLICE + 1);
  // Results pushed meanwhile (a small emission, an error) queue behind the backlog.
  p.push(new Emission(rows(big, 3), null));
  p.push(new RowError("boom"));
  let ranBetween = false;
  setImmediate(() => (ranBetween = conn.got.length < big));
  await until(() => conn.got.length === big + 4);
  expect(ranBetween).toBe(true);
  const want = [...rows(0, big + 3).map((r) => JSON.stringify(r)), '{"error":"boom"}'];
  expect(conn.got).toEqual(want);
  expect(p.room()).toBe(room0);
  await p.close(1000);
});

test("a big result's rows become outputs slice by slice: counted as one pass counts them, empty ones omitted", async () => {
  const { p, conn } = pipeline({ omitIfEmpty: true });
  const t = p.metrics.find((m) => m.name.endsWith("_transform"))!;
  const big = SLICE * 3;
  const input: Obj[] = rows(0, big).map((r) => (r.i % 10 === 0 ? {} : r));
  p.push(new Emission(input, null));
  expect([t.recordsIn, t.recordsOut]).toEqual([1, 0]);
  const sent = input.filter((r) => Object.keys(r).length > 0);
  await until(() => conn.got.length === sent.length);
  expect(conn.got).toEqual(sent.map((r) => JSON.stringify(r)));
  expect([t.recordsIn, t.recordsOut, t.messagesProcessed, t.exceptions]).toEqual([1, sent.length, sent.length, 0]);
  await p.close(1000);
});

test("room waiters are called once the backlog has drained", async () => {
  const { p } = pipeline({ bufferLength: SLICE * 2 });
  p.push(new Emission(rows(0, SLICE * 6), null));
  expect(p.room()).toBeLessThanOrEqual(0);
  let woke = false;
  p.onRoom(() => (woke = true));
  await until(() => woke);
  expect(p.room()).toBeGreaterThan(0);
  await p.close(1000);
});

test("a waiter that asks again while there is no room is called once (the list does not grow with each wake)", async () => {
  const { p } = pipeline({ bufferLength: SLICE * 2 });
  p.push(new Emission(rows(0, SLICE * 6), null));
  expect(p.room()).toBeLessThanOrEqual(0);
  let woke = 0;
  const wake = () => woke++;
  // A drain woken by every batch its source admits asks each time.
  for (let i = 0; i < 1000; i++) p.onRoom(wake);
  await until(() => woke > 0);
  await Bun.sleep(5);
  expect(woke).toBe(1);
  await p.close(1000);
});

test("end() encodes the whole backlog at once, so nothing is lost at a stop", async () => {
  const { p, conn } = pipeline();
  p.push(new Emission(rows(0, SLICE * 4), null));
  await p.close(1000);
  expect(conn.got.length).toBe(SLICE * 4);
  expect(conn.got[SLICE * 4 - 1]).toBe(JSON.stringify({ i: SLICE * 4 - 1 }));
});

test("a small emission is still encoded synchronously (no backlog)", async () => {
  const { p } = pipeline();
  const room0 = p.room();
  p.push(new Emission(rows(0, SLICE), null));
  expect(p.room()).toBe(room0 - SLICE);
  await p.close(1000);
});

/** Rows whose encoding takes Go's slow paths too: HTML characters, -0, big ints, nesting, nulls. */
const mixed = (from: number, n: number): Obj[] =>
  Array.from({ length: n }, (_, k): Obj => {
    const i = from + k;
    if (i % 7 === 0) return { i, s: `<a&b>${i}`, z: -0, big: 9007199254740993n };
    if (i % 5 === 0) return { i, nest: { b: [1, 2.5, null], a: "x" }, t: true };
    return { i, f: i / 3, s: "row " + i, n: null };
  });

const whole = (props: Record<string, unknown> = {}, conn?: Collect) => pipeline({ sendSingle: false, ...props }, conn);

test("a whole window without sendSingle is built across slices, byte-identical to one pass", async () => {
  const { p, conn } = whole();
  const data = mixed(0, SLICE_ROWS * 5 + 7);
  p.push(new Emission(data, null));
  // One payload in the making: it counts as one queued item until it is done.
  expect(conn.got.length).toBe(0);
  expect(p.queued).toBe(1);
  let ranBetween = false;
  setImmediate(() => (ranBetween = conn.got.length === 0));
  await until(() => conn.got.length === 1);
  expect(ranBetween).toBe(true);
  expect(conn.got[0]).toBe(encodeGoJson(data));
  await p.close(1000);
});

test("results arriving while a whole window is being built are sent after it, in order", async () => {
  const { p, conn } = whole();
  const a = mixed(0, SLICE_ROWS * 3);
  const b = mixed(10, 3);
  const c = mixed(100, SLICE_ROWS * 2 + 1);
  p.push(new Emission(a, null));
  p.push(new Emission(b, null));
  p.push(new RowError("boom"));
  p.push(new Emission(c, null));
  expect(p.queued).toBe(4);
  await until(() => conn.got.length === 4);
  expect(conn.got).toEqual([encodeGoJson(a), encodeGoJson(b), '{"error":"boom"}', encodeGoJson(c)]);
  await p.close(1000);
});

test("end() finishes a whole window being built synchronously", async () => {
  const { p, conn } = whole();
  const a = mixed(0, SLICE_ROWS * 4);
  const b = mixed(5, SLICE_ROWS * 2);
  p.push(new Emission(a, null));
  p.push(new Emission(b, null));
  expect(conn.got.length).toBe(0);
  p.end();
  expect(p.queued).toBe(2);
  await p.close(1000);
  expect(conn.got).toEqual([encodeGoJson(a), encodeGoJson(b)]);
});

test("a value JSON cannot encode past the first slice drops that window only, counted on the encode node", async () => {
  const { p, conn } = whole();
  const bad = mixed(0, SLICE_ROWS * 3);
  bad[SLICE_ROWS * 2]!.f = NaN;
  const next = mixed(1, SLICE_ROWS + 1);
  p.push(new Emission(bad, null));
  p.push(new Emission(next, null));
  await until(() => conn.got.length === 1);
  expect(conn.got).toEqual([encodeGoJson(next)]);
  const enc = p.metrics.find((m) => m.name.endsWith("_encode"))!;
  expect(enc.exceptions).toBe(1);
  expect(enc.lastException).toBe("json: unsupported value: NaN");
  expect(enc.recordsIn).toBe(2);
  expect(enc.recordsOut).toBe(1);
  expect(p.queued).toBe(0);
  await p.close(1000);
});

test("a sink failing while a whole window is being built retries and keeps the order", async () => {
  const conn = new Collect();
  conn.failures = 3;
  const { p } = whole({ resendInterval: 1 }, conn);
  const first = mixed(0, 2);
  const big = mixed(0, SLICE_ROWS * 3);
  p.push(new Emission(first, null));
  p.push(new Emission(big, null));
  await until(() => conn.got.length === 2);
  expect(conn.got).toEqual([encodeGoJson(first), encodeGoJson(big)]);
  expect(conn.failures).toBe(0);
  expect(p.metrics.find((m) => m.name === "collect_0")!.exceptions).toBe(3);
  await p.close(1000);
});

test("a whole window being built counts against room() like the one item it becomes", async () => {
  const { p, conn } = whole({ bufferLength: 2 });
  p.push(new Emission(mixed(0, SLICE_ROWS * 2), null));
  expect(p.room()).toBe(1);
  p.push(new Emission(mixed(0, SLICE_ROWS * 2), null));
  expect(p.room()).toBe(0);
  let woke = false;
  p.onRoom(() => (woke = true));
  await until(() => woke && conn.got.length === 2);
  await p.close(1000);
});

test("a big batch (batchSize) is built across slices, byte-identical to the batch writer's one pass", async () => {
  const { p, conn } = whole({ batchSize: 3 });
  const a = mixed(0, SLICE_ROWS * 2);
  const b = mixed(7, 2);
  const c = mixed(9, SLICE_ROWS + 3);
  p.push(new Emission(a, null));
  p.push(new Emission(b, null));
  p.push(new Emission(c, null));
  expect(conn.got.length).toBe(0);
  expect(p.queued).toBe(1);
  // The next batch queues behind the one being built.
  const d = mixed(20, 1);
  p.push(new Emission(d, null));
  p.push(new RowError("boom"));
  p.push(new Emission(d, null));
  expect(p.queued).toBe(2);
  await until(() => conn.got.length === 2);
  const err: Value = { error: "boom" };
  expect(conn.got).toEqual([encodeGoJson([a, b, c]), encodeGoJson([d, err, d])]);
  const w = p.metrics.find((m) => m.name.endsWith("_batchWriter"))!;
  expect([w.recordsIn, w.recordsOut, w.exceptions]).toEqual([2, 2, 0]);
  await p.close(1000);
});

test("a batch of many single rows (sendSingle) is built across slices; end() sends the partial batch after it", async () => {
  const { p, conn } = pipeline({ batchSize: 1 });
  const a = mixed(0, SLICE * 6);
  p.push(new Emission(a, null));
  expect(conn.got.length).toBe(0);
  const { p: q, conn: qc } = pipeline({ batchSize: 2 });
  q.push(new Emission(a, null));
  q.push(new Emission(mixed(3, 2), null));
  q.push(new Emission(mixed(5, 1), null));
  // The second batch (one result so far) is flushed by end(), after the first one is finished.
  await q.close(1000);
  expect(qc.got).toEqual([encodeGoJson([...a, ...mixed(3, 2)]), encodeGoJson(mixed(5, 1))]);
  await until(() => conn.got.length === 1);
  expect(conn.got[0]).toBe(encodeGoJson(a));
  await p.close(1000);
});

const TMPL = `{{$n := len .}}[{{range $i, $r := .}}{{if $i}},{{end}}{"i":{{$r.i}},"s":{{json $r.s}},"of":{{$n}}}{{end}}]`;

test("a whole window's dataTemplate is rendered across slices, byte-identical to one pass; later results wait", async () => {
  const { p, conn } = whole({ dataTemplate: TMPL });
  const a = mixed(0, SLICE_ROWS * 5 + 7);
  const b = mixed(3, 4);
  p.push(new Emission(a, null));
  expect(conn.got.length).toBe(0);
  expect(p.queued).toBe(1);
  p.push(new Emission(b, null));
  p.push(new Emission(a, null));
  let ranBetween = false;
  setImmediate(() => (ranBetween = conn.got.length === 0));
  await until(() => conn.got.length === 3);
  expect(ranBetween).toBe(true);
  const render = compileTemplate(TMPL);
  expect(conn.got).toEqual([render(a), render(b), render(a)]);
  const t = p.metrics.find((m) => m.name.endsWith("_transform"))!;
  expect([t.recordsIn, t.recordsOut, t.exceptions]).toEqual([3, 3, 0]);
  await p.close(1000);
});

test("end() finishes a whole window's dataTemplate being rendered synchronously", async () => {
  const { p, conn } = whole({ dataTemplate: TMPL });
  const a = mixed(0, SLICE_ROWS * 3);
  p.push(new Emission(a, null));
  p.push(new Emission(a, null));
  expect(conn.got.length).toBe(0);
  await p.close(1000);
  const render = compileTemplate(TMPL);
  expect(conn.got).toEqual([render(a), render(a)]);
});

test("a dataTemplate failing past the first slice drops that window, counted on the transform node as one pass counts it", async () => {
  const { p, conn } = whole({ dataTemplate: "{{range .}}{{.nest.a}}{{end}}" });
  const bad: Obj[] = Array.from({ length: SLICE_ROWS * 3 }, (_, i): Obj => ({ nest: i === SLICE_ROWS * 2 ? "flat" : { a: "x" } }));
  const ok: Obj[] = Array.from({ length: SLICE_ROWS + 1 }, (): Obj => ({ nest: { a: "y" } }));
  p.push(new Emission(bad, null));
  p.push(new Emission(ok, null));
  await until(() => conn.got.length === 1);
  expect(conn.got).toEqual(["y".repeat(SLICE_ROWS + 1)]);
  const t = p.metrics.find((m) => m.name.endsWith("_transform"))!;
  expect([t.recordsIn, t.recordsOut, t.messagesProcessed, t.exceptions]).toEqual([2, 1, SLICE_ROWS + 1, 1]);
  expect(t.lastException).toStartWith("fail to encode data [map[nest:map[a:x]]");
  expect(t.lastException).toEndWith('with dataTemplate for error template: sink:1:13: executing "sink" at <.nest.a>: can\'t evaluate field a in type string');
  // A small window failing the same way (one pass, in the transform) reads the same.
  p.push(new Emission([{ nest: "flat" }], null));
  expect(t.lastException).toBe('fail to encode data [map[nest:flat]] with dataTemplate for error template: sink:1:13: executing "sink" at <.nest.a>: can\'t evaluate field a in type string');
  expect([t.recordsIn, t.recordsOut, t.exceptions]).toEqual([3, 1, 2]);
  await p.close(1000);
});

const ROW_TMPL = `{"i":{{.i}},"s":{{json .s}}}`;

test("a big result sent singly through a row dataTemplate is rendered across slices, then encoded: as one pass, in order", async () => {
  const { p, conn } = pipeline({ dataTemplate: ROW_TMPL });
  const a = mixed(0, SLICE * 4 + 3);
  p.push(new Emission(a, null));
  p.push(new Emission(mixed(900, 2), null));
  // Nothing is rendered in the push; the whole result waits and counts against room.
  expect(conn.got.length).toBe(0);
  expect(p.queued).toBe(a.length + 2);
  let ranBetween = false;
  setImmediate(() => (ranBetween = conn.got.length === 0));
  await until(() => conn.got.length === a.length + 2);
  expect(ranBetween).toBe(true);
  const render = compileTemplate(ROW_TMPL);
  expect(conn.got).toEqual([...a, ...mixed(900, 2)].map((r) => render(r)));
  const t = p.metrics.find((m) => m.name.endsWith("_transform"))!;
  expect([t.recordsIn, t.recordsOut, t.messagesProcessed, t.exceptions]).toEqual([2, a.length + 2, a.length + 2, 0]);
  await p.close(1000);
});

test("a row the dataTemplate fails on past the first slice drops the whole result, counted once, as one pass does", async () => {
  const { p, conn } = pipeline({ dataTemplate: "{{.nest.a}}" });
  const room0 = p.room();
  const bad: Obj[] = Array.from({ length: SLICE * 3 }, (_, i): Obj => ({ nest: i === SLICE * 2 ? "flat" : { a: "x" } }));
  p.push(new Emission(bad, null));
  p.push(new Emission([{ nest: { a: "y" } }], null));
  await until(() => conn.got.length === 1);
  expect(conn.got).toEqual(["y"]);
  const t = p.metrics.find((m) => m.name.endsWith("_transform"))!;
  expect([t.recordsIn, t.recordsOut, t.exceptions]).toEqual([2, 1, 1]);
  const message = t.lastException;
  expect(message).toStartWith("fail to encode data map[nest:flat] with dataTemplate for error template: ");
  expect(p.room()).toBe(room0);
  expect(p.queued).toBe(0);
  // A small result failing the same way (one pass, in the transform) reads the same.
  p.push(new Emission([{ nest: "flat" }, { nest: "flat" }], null));
  expect(t.lastException).toBe(message);
  expect([t.recordsIn, t.recordsOut, t.exceptions]).toEqual([3, 1, 2]);
  // end() renders and encodes a waiting result at once.
  p.push(new Emission(bad.slice(0, SLICE * 2), null));
  await p.close(1000);
  expect(conn.got.length).toBe(1 + SLICE * 2);
});

test("the dataTemplate is not rendered per item as a dynamic property; other templated properties are", async () => {
  const { p, conn } = whole({ dataTemplate: "{{range .}}{{.i}}{{end}}", path: "/out/{{len .}}" });
  p.push(new Emission(mixed(0, 3), null));
  await until(() => conn.got.length === 1);
  expect(conn.got).toEqual(["012"]);
  expect(conn.props).toEqual([{ sendSingle: false, dataTemplate: "{{range .}}{{.i}}{{end}}", path: "/out/3" }]);
  await p.close(1000);
});

test("outputs encoded in later slices carry the traceparent of the push that made them", async () => {
  const traced = (p: SinkPipeline, tp: string, rows: Obj[]) => {
    p.traceparent = tp; // as a traced rule sets it around push
    p.push(new Emission(rows, null));
    p.traceparent = null;
  };
  const single = pipeline();
  traced(single.p, "tp-a", mixed(0, SLICE * 3));
  traced(single.p, "tp-b", mixed(0, 2));
  const w = whole({ dataTemplate: TMPL });
  traced(w.p, "tp-c", mixed(0, SLICE_ROWS * 2));
  traced(w.p, "tp-d", mixed(0, SLICE_ROWS * 2));
  await single.p.close(1000);
  await until(() => w.conn.got.length === 2);
  expect(single.conn.traces).toEqual([...Array(SLICE * 3).fill("tp-a"), "tp-b", "tp-b"]);
  expect(w.conn.traces).toEqual(["tp-c", "tp-d"]);
  await w.p.close(1000);
});

test.each([
  ["with a header", { hasHeader: true, delimiter: ";" }],
  ["without a header", { hasHeader: false }],
])("a whole window in delimited format is built across slices, byte-identical to one pass (%s)", async (_n, props) => {
  const { p, conn } = whole({ format: "delimited", ...props });
  // Not every element is a map: the encoder skips those, and takes the columns from the first map.
  const data = [null, ...mixed(0, SLICE_ROWS * 3), "x", ...mixed(5, 9)] as unknown as Obj[];
  p.push(new Emission(data, null));
  expect(conn.got.length).toBe(0);
  await until(() => conn.got.length === 1);
  const c = parseSinkCommon({ format: "delimited", ...props });
  expect(conn.got[0]).toBe(createEncoder("delimited", c)(data) as string);
  expect(conn.got[0]!.split("\n").length).toBe(SLICE_ROWS * 3 + 9 + (props.hasHeader ? 1 : 0));
  await p.close(1000);
});
