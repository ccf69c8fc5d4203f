/**
 * The file source (rules-and-sinks.md §11.1) on real files and directories: json/lines/csv,
 * ignore lines, decompression, actions after read, directory order and watching, EOF → rule
 * `done` through `floe run`, scan tables loaded from a file, eKuiper's error texts, and
 * backpressure (reading stops while the bus refuses).
 */
import { afterAll, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import type { Obj } from "../../../lib/value/values.ts";
import { FileSource } from "../../../lib/connectors/file/source.ts";
import { sourceType } from "../../../lib/connectors/sources.ts";
import { floeRun, openOn, rowsOf, text } from "../../helpers/source.ts";
import { metric, streams, testRuntime, waitFor } from "../../helpers/runtime.ts";

const dir = mkdtempSync(join(tmpdir(), "floe-file-src-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let n = 0;
/** A fresh directory under the test root with the given files. */
function fixture(files: Record<string, string | Uint8Array>): string {
  const d = join(dir, `case${n++}`);
  mkdirSync(d, { recursive: true });
  for (const [name, content] of Object.entries(files)) writeFileSync(join(d, name), content);
  return d;
}

const env = { baseDir: dir };

test.each([
  [{ fileType: "" }, "missing or invalid property fileType, must be 'json'"],
  [{ fileType: "parquet" }, "fileType parquet is not supported: floe has no parquet reader (eKuiper full build only)"],
  [{ fileType: "xml" }, "invalid property fileType: xml"],
  [{ path: "" }, "missing property Path"],
  [{ path: "no/such/dir" }, "invalid path no/such/dir"],
  [{ actionAfterRead: 3 }, "invalid actionAfterRead: 3"],
  [{ actionAfterRead: 2 }, "missing moveTo when actionAfterRead is 2"],
  [{ fileType: "lines", decompression: "gzip" }, "decompression is not supported for lines file type"],
  [{ datasource: "absent.json" }, `file ${join(dir, "errs", "absent.json")} not exist`],
  [{ interval: "5x" }, 'time: unknown unit "x" in duration "5x"'],
])("invalid props %j fail with eKuiper's text", (props, err) => {
  mkdirSync(join(dir, "errs"), { recursive: true });
  expect(() => new FileSource({ fileType: "json", path: join(dir, "errs"), ...props }, env)).toThrow(err);
});

test("moveTo must be a directory; an absent one is created", () => {
  const d = fixture({ "a.json": "[]", "notdir": "x" });
  expect(() => new FileSource({ path: d, actionAfterRead: 2, moveTo: join(d, "notdir") }, env)).toThrow(`moveTo ${join(d, "notdir")} is not a directory`);
  new FileSource({ path: d, datasource: "a.json", actionAfterRead: 2, moveTo: join(d, "new/dir") }, env);
  expect(existsSync(join(d, "new/dir"))).toBe(true);
});

test("a relative path resolves against the eKuiper root (baseDir)", async () => {
  const d = fixture({ "r.json": '{"a":1}' });
  const src = new FileSource({ path: d.slice(dir.length + 1), datasource: "r.json" }, env);
  expect(src.path).toBe(join(d, "r.json"));
  const p = await openOn(src);
  await waitFor(p.eof, "eof");
  expect(rowsOf(p.take())).toEqual([{ a: 1 }]);
});

test("a json file is read once through `floe run`: array elements are rows, meta(file) is the path, the rule ends done", async () => {
  const d = fixture({ "in.json": '[{"a":1,"b":"x, ]"},\n {"a":2.5, "c":{"d":[1,2]}}, {"a":3}]' });
  writeFileSync(join(d, "r.sql"), `CREATE STREAM s () WITH (TYPE="file", DATASOURCE="in.json", EXTRA="{\\"path\\":\\"${d}\\"}");\nSELECT a, b, c, meta(file) AS f FROM s`);
  const p = floeRun([join(d, "r.sql"), "--status", join(d, "st.json")], d);
  const [out, err, code] = await Promise.all([text(p.stdout), text(p.stderr), p.exited]);
  expect(err).toBe("");
  expect(code).toBe(0);
  const f = JSON.stringify(join(d, "in.json"));
  expect(out).toBe(`{"a":1,"b":"x, ]","f":${f}}\n{"a":2.5,"c":{"d":[1,2]},"f":${f}}\n{"a":3,"f":${f}}\n`);
  const st = JSON.parse(await Bun.file(join(d, "st.json")).text()) as Record<string, unknown>;
  expect(st.status).toBe("stopped");
  expect(st.message).toBe("done");
  expect(st.source_s_0_records_in_total).toBe(3);
}, 20_000);

test("lines: one payload per line; ignoreStartLines/ignoreEndLines skip lines; blank lines are skipped", async () => {
  const d = fixture({ "in.txt": 'header\n{"a":1}\r\n\n{"a":2}\n{"a":3}\nfooter1\nfooter2' });
  const p = await openOn(new FileSource({ path: d, datasource: "in.txt", fileType: "lines", ignoreStartLines: 1, ignoreEndLines: 2 }, env));
  await waitFor(p.eof, "eof");
  const msgs = p.take();
  expect(rowsOf(msgs)).toEqual([{ a: 1 }, { a: 2 }, { a: 3 }]);
  expect(msgs[0]!.meta).toEqual({ file: join(d, "in.txt") });
  expect(p.exceptions).toEqual([]);
});

test("csv: header names, columns, cols0… without either [quirk], quoting, delimiter's first character", async () => {
  const csv = 'id;name\n1;"a;b"\n2;"say ""hi"""\n';
  const d = fixture({ "h.csv": csv, "n.csv": '1,x\n2,"multi\nline"\n' });
  const read = async (props: Record<string, unknown>) => {
    const p = await openOn(new FileSource({ path: d, fileType: "csv", ...props }, env));
    await waitFor(p.eof, "eof");
    expect(p.exceptions).toEqual([]);
    return rowsOf(p.take());
  };
  expect(await read({ datasource: "h.csv", hasHeader: true, delimiter: ";;" })).toEqual([
    { id: "1", name: "a;b" },
    { id: "2", name: 'say "hi"' },
  ]);
  expect(await read({ datasource: "n.csv", columns: ["k", "v"] })).toEqual([
    { k: "1", v: "x" },
    { k: "2", v: "multi\nline" },
  ]);
  expect(await read({ datasource: "n.csv" })).toEqual([
    { cols0: "1", cols1: "x" },
    { cols0: "2", cols1: "multi\nline" },
  ]);
});

test("csv with hasHeader and no header row left: `header not found`", async () => {
  const d = fixture({ "e.csv": "skipped\n" });
  const p = await openOn(new FileSource({ path: d, datasource: "e.csv", fileType: "csv", hasHeader: true, ignoreStartLines: 1 }, env));
  await waitFor(p.eof, "eof");
  expect(p.exceptions).toEqual(["header not found"]);
});

test("json files decompress with gzip and zstd", async () => {
  const body = Buffer.from('[{"z":1},{"z":2}]');
  const d = fixture({ "g.json.gz": gzipSync(body), "z.json.zst": Bun.zstdCompressSync(body) });
  for (const [name, decompression] of [
    ["g.json.gz", "gzip"],
    ["z.json.zst", "zstd"],
  ]) {
    const p = await openOn(new FileSource({ path: d, datasource: name, decompression }, env));
    await waitFor(p.eof, "eof");
    expect(rowsOf(p.take())).toEqual([{ z: 1 }, { z: 2 }]);
  }
});

test("actionAfterRead 1 deletes the file, 2 moves it to moveTo", async () => {
  const d = fixture({ "del.json": '{"a":1}', "mv.json": '{"a":2}' });
  const p1 = await openOn(new FileSource({ path: d, datasource: "del.json", actionAfterRead: 1 }, env));
  await waitFor(p1.eof, "eof");
  expect(existsSync(join(d, "del.json"))).toBe(false);
  const p2 = await openOn(new FileSource({ path: d, datasource: "mv.json", actionAfterRead: 2, moveTo: join(d, "moved") }, env));
  await waitFor(p2.eof, "eof");
  expect(existsSync(join(d, "mv.json"))).toBe(false);
  expect(await Bun.file(join(d, "moved", "mv.json")).text()).toBe('{"a":2}');
});

test("a directory: existing files oldest modification first (empty ones skipped), then new files as they are written; no EOF", async () => {
  const d = fixture({ "b.json": '{"f":"b"}', "a.json": '{"f":"a"}', "empty.json": "" });
  utimesSync(join(d, "b.json"), new Date(1_000_000), new Date(1_000_000));
  utimesSync(join(d, "a.json"), new Date(2_000_000), new Date(2_000_000));
  const src = new FileSource({ path: d, actionAfterRead: 2, moveTo: join(d, "done") }, env);
  const p = await openOn(src);
  const got: Obj[] = [];
  await waitFor(() => (got.push(...rowsOf(p.take())), got.length === 2), "existing files");
  expect(got).toEqual([{ f: "b" }, { f: "a" }]);
  writeFileSync(join(d, "c.json"), '[{"f":"c1"},{"f":"c2"}]');
  await waitFor(() => (got.push(...rowsOf(p.take())), got.length === 4), "the new file");
  expect(got.slice(2)).toEqual([{ f: "c1" }, { f: "c2" }]);
  await waitFor(() => readdirSync(join(d, "done")).length === 3, "moved files");
  expect(p.eof()).toBe(false);
  await src.close();
  writeFileSync(join(d, "late.json"), '{"f":"late"}');
  // A fixed wait, to show that a closed source reads no new file.
  await Bun.sleep(150);
  expect(p.take()).toEqual([]);
});

test("a directory with interval re-reads only files modified since they were read", async () => {
  const d = fixture({ "a.json": '{"v":1}' });
  const src = new FileSource({ path: d, interval: "100ms" }, env);
  const p = await openOn(src);
  const got: Obj[] = [];
  await waitFor(() => (got.push(...rowsOf(p.take())), got.length === 1), "first read");
  // A fixed wait over two intervals, to show that an unmodified file is not read again.
  await Bun.sleep(250);
  got.push(...rowsOf(p.take()));
  expect(got).toEqual([{ v: 1 }]);
  writeFileSync(join(d, "a.json"), '{"v":2}');
  utimesSync(join(d, "a.json"), new Date(), new Date(Date.now() + 5000));
  await waitFor(() => (got.push(...rowsOf(p.take())), got.length === 2), "modified file");
  expect(got[1]).toEqual({ v: 2 });
  await src.close();
});

test("backpressure: the source stops reading while the bus refuses, and resumes as it drains", async () => {
  const lines = 50_000;
  let body = "";
  for (let i = 0; i < lines; i++) body += `{"i":${i}}\n`;
  const d = fixture({ "big.txt": body });
  const src = new FileSource({ path: d, datasource: "big.txt", fileType: "lines" }, env);
  const p = await openOn(src, 100);
  await waitFor(() => p.bus.refusals > 0, "a refusal");
  // A fixed wait, to show that nothing more is admitted while the bus refuses.
  await Bun.sleep(100);
  // Full and waiting: nothing beyond the queue was admitted, and the file is not finished.
  expect(p.sub.length).toBe(100);
  expect(p.eof()).toBe(false);
  let seen = 0;
  let last = -1;
  let ordered = true;
  const deadline = Date.now() + 10_000;
  while (!(p.eof() && p.sub.length === 0) && Date.now() < deadline) {
    for (const r of rowsOf(p.take())) {
      if ((r.i as number) !== last + 1) ordered = false;
      last = r.i as number;
      seen++;
    }
    await new Promise((r) => setImmediate(r));
  }
  expect(seen).toBe(lines);
  expect(ordered).toBe(true);
});

test("sendInterval delays each row", async () => {
  const d = fixture({ "s.json": "[1,2,3]".replace(/\d/g, (x) => `{"n":${x}}`) });
  const p = await openOn(new FileSource({ path: d, datasource: "s.json", sendInterval: "80ms" }, env));
  await waitFor(() => p.sub.length > 0, "the first row");
  // A fixed wait: time is the subject (the second row is due 80 ms after the first).
  await Bun.sleep(30);
  expect(p.sub.length).toBe(1);
  await waitFor(p.eof, "eof");
  expect(rowsOf(p.take())).toEqual([{ n: 1 }, { n: 2 }, { n: 3 }]);
});

test("a file table is a scan table: its rows are loaded and retained per RETAIN_SIZE", async () => {
  const d = fixture({ "lookup.json": '[{"id":1,"name":"one"},{"id":2,"name":"two"},{"id":3,"name":"three"}]' });
  const defs = streams(
    `CREATE STREAM s () WITH (TYPE="memory", DATASOURCE="ft/in")`,
    `CREATE TABLE t (id bigint, name string) WITH (TYPE="file", DATASOURCE="lookup.json", RETAIN_SIZE="2", EXTRA="{\\"path\\":\\"${d}\\"}")`,
  );
  const rt = testRuntime();
  const got: Obj[] = [];
  rt.env.pubsub.subscribe(
    "ft/out",
    (_t, rows) => (got.push(...(Array.isArray(rows) ? rows : [rows])), true),
    () => {},
  );
  const rule = await rt.rule({ id: "ft", sql: "SELECT s.id, t.name FROM s INNER JOIN t ON s.id = t.id", actions: [{ memory: { topic: "ft/out", sendSingle: true } }] }, defs).start();
  // eKuiper counts one record per file a table reads, not one per row.
  await waitFor(() => metric(rule, "source_t_0_records_in_total") === 1, "table loaded");
  expect(metric(rule, "source_t_0_messages_processed_total")).toBe(3);
  for (const id of [1, 2, 3]) await rt.env.pubsub.publish("ft/in", { id });
  await waitFor(() => got.length === 2, "joined rows");
  // RETAIN_SIZE 2 keeps the last two rows of the file.
  expect(got).toEqual([
    { id: 2, name: "two" },
    { id: 3, name: "three" },
  ]);
  await rule.stop();
});

test("a table without TYPE is a file table (sql §3.4), a stream without TYPE stays MQTT", async () => {
  const d = fixture({ "names.json": '[{"id":1,"name":"one"},{"id":2,"name":"two"}]' });
  const defs = streams(
    `CREATE STREAM s () WITH (TYPE="memory", DATASOURCE="nt/in")`,
    `CREATE TABLE t (id bigint, name string) WITH (DATASOURCE="names.json", EXTRA="{\\"path\\":\\"${d}\\"}")`,
  );
  expect(sourceType(defs.get("t")!)).toBe("file");
  expect(sourceType(streams(`CREATE STREAM m () WITH (DATASOURCE="x")`).get("m")!)).toBe("mqtt");
  expect(sourceType(defs.get("t")!, "stdin")).toBe("stdin");
  const rt = testRuntime();
  const got: Obj[] = [];
  rt.env.pubsub.subscribe(
    "nt/out",
    (_t, rows) => (got.push(...(Array.isArray(rows) ? rows : [rows])), true),
    () => {},
  );
  const rule = await rt.rule({ id: "nt", sql: "SELECT s.id, t.name FROM s INNER JOIN t ON s.id = t.id", actions: [{ memory: { topic: "nt/out", sendSingle: true } }] }, defs).start();
  await waitFor(() => metric(rule, "source_t_0_records_in_total") === 1, "table loaded");
  for (const id of [1, 2]) await rt.env.pubsub.publish("nt/in", { id });
  await waitFor(() => got.length === 2, "joined rows");
  expect(got).toEqual([
    { id: 1, name: "one" },
    { id: 2, name: "two" },
  ]);
  await rule.stop();
});
