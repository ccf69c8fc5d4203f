/**
 * Replay envelopes with a `raw` payload (pipe-mode.md §Input) on a FORMAT="binary" stream: the
 * bytes are the stream's one column and a sink writes them back as base64, as Go's encoder does.
 */
import { expect, test } from "bun:test";
import { UTC } from "../../lib/value/time.ts";
import { runPipe } from "../../lib/pipe/direct.ts";

async function* batches(lines: string[]): AsyncIterable<string[]> {
  yield lines;
}

async function replay(sql: string, lines: string[]) {
  let out = "";
  let err = "";
  await runPipe({
    sql,
    options: {},
    input: batches(lines),
    replay: true,
    emit: "rows",
    onEof: "flush",
    zone: UTC,
    write: (t) => void (out += t),
    warn: (t) => void (err += t),
  });
  return { out, err };
}

const LINES = ['{"ts":1,"raw":"MjEuNA==","meta":{"topic":"a/b"}}', '{"ts":2,"raw":"MR==","meta":{"topic":"c"}}', '{"ts":3,"raw":"","meta":{}}', '{"ts":4,"raw":"MjEu NA","meta":{"topic":"d"}}'];

test("raw payloads are the `self` column, written back as the standard base64 of their bytes", async () => {
  const r = await replay('CREATE STREAM s () WITH (FORMAT="binary");\nSELECT meta(topic) AS topic, self AS state FROM s', LINES);
  expect(r.err).toBe("");
  expect(r.out).toBe('{"state":"MjEuNA==","topic":"a/b"}\n{"state":"MQ==","topic":"c"}\n{"state":""}\n{"state":"MjEuNA==","topic":"d"}\n');
});

test("a binary stream with a schema names its bytes column", async () => {
  const r = await replay('CREATE STREAM s (payload bytea) WITH (FORMAT="binary");\nSELECT payload FROM s', LINES);
  expect(r.err).toBe("");
  expect(r.out).toBe('{"payload":"MjEuNA=="}\n{"payload":"MQ=="}\n{"payload":""}\n{"payload":"MjEuNA=="}\n');
});
