/**
 * The csv file sink's header (rules-and-sinks.md §11.2, §13.3) through a sink pipeline, as a rule
 * drives it: with `hasHeader` and `sendSingle` each row carries the delimited encoder's header
 * record, which only the file sink receives and strips, so the file starts with the header.
 */
import { expect, test } from "bun:test";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Emission } from "../../../lib/core/item.ts";
import type { SinkConnector, SinkItem } from "../../../lib/sink/connector.ts";
import { FileSink } from "../../../lib/connectors/file/sink.ts";
import type { Obj } from "../../../lib/value/values.ts";
import { openPipeline } from "../../helpers/sink.ts";

async function csv(props: Record<string, unknown>, emissions: Obj[][]): Promise<string> {
  const path = join(mkdtempSync(join(tmpdir(), "floe-csv-")), "out.csv");
  const all = { path, fileType: "csv", format: "delimited", ...props };
  const p = openPipeline("file", new FileSink(all), all);
  for (const rows of emissions) p.push(new Emission(rows, null));
  await p.close(1000);
  return readFileSync(path, "utf8");
}

test("hasHeader with sendSingle: the header (the first row's keys, sorted) starts the file", async () => {
  expect(await csv({ hasHeader: true }, [[{ b: 2, a: 1 }], [{ a: 3, b: 4 }]])).toBe("a,b\n1,2\n3,4");
});

test("hasHeader with sendSingle and fields: the header is the fields, in their order", async () => {
  expect(await csv({ hasHeader: true, fields: ["b", "a"], delimiter: ";" }, [[{ a: 1, b: 2 }], [{ a: 3, b: 4 }]])).toBe("b;a\n2;1\n4;3");
});

test("hasHeader with a collection: the encoder's header line starts the file", async () => {
  expect(await csv({ hasHeader: true, sendSingle: false }, [[{ b: 2, a: 1 }, { a: 3, b: 4 }]])).toBe("a,b\n1,2\n3,4");
});

test("[quirk] without hasHeader every row is preceded by a newline, the first too", async () => {
  expect(await csv({}, [[{ b: 2, a: 1 }], [{ a: 3, b: 4 }]])).toBe("\n1,2\n3,4");
});

test("other sinks with the delimited format and hasHeader get the bare line, no header record", async () => {
  const got: string[] = [];
  const conn: SinkConnector = { bytes: true, direct: true, open() {}, send: (item: SinkItem) => void got.push(item.payload as string), close() {} };
  const p = openPipeline("direct", conn, { format: "delimited", hasHeader: true });
  await new Promise((r) => setImmediate(r));
  p.push(new Emission([{ b: 2, a: 1 }], null));
  await p.close(1000);
  expect(got).toEqual(["1,2"]);
});
