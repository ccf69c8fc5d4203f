/**
 * Pipe mode's member-selective decoding (json-pick.ts) as the file/replay runner uses it:
 * the output and the errors are those of the full decoder, whatever the scan decides.
 */
import { describe, expect, test } from "bun:test";
import { UTC } from "../../lib/value/time.ts";
import { runPipe } from "../../lib/pipe/direct.ts";

async function* batches(lines: string[]): AsyncIterable<string[]> {
  yield lines;
}

async function run(sql: string, lines: string[], opts: { replay?: boolean; ignoreCase?: boolean } = {}) {
  let out = "";
  let err = "";
  const res = await runPipe({
    sql,
    options: {},
    input: batches(lines),
    replay: opts.replay ?? false,
    ignoreCase: opts.ignoreCase,
    emit: "rows",
    onEof: "flush",
    zone: UTC,
    write: (t) => void (out += t),
    warn: (t) => void (err += t),
  });
  return { res, out, err };
}

describe("member-selective decoding in pipe mode", () => {
  test("kept columns keep int64 exactness and float typing; unread members never matter", async () => {
    const r = await run("SELECT a, b, a + 1 AS c FROM s", [
      '{"a":9007199254740993,"b":1.0,"skip":{"deep":[1,2,{"x":"\\u00e9"}]}}',
      '{ "skip" : "x" , "b" : -0 , "a" : -5 }',
      '{"a":1,"a":2,"b":"t\\"q"}',
    ]);
    expect(r.err).toBe("");
    expect(r.out).toBe('{"a":9007199254740993,"b":1,"c":9007199254740994}\n{"a":-5,"b":0,"c":-4}\n{"a":2,"b":"t\\"q","c":3}\n');
  });

  test("invalid lines get the full decoder's errors", async () => {
    const lines = ['{"a":1,"skip":01}', '{"a":1,"skip":"\u0001"}', '{"a":1} x', '{"a":1,}'];
    const picked = await run("SELECT a FROM s", lines);
    const full = await run("SELECT * FROM s", lines);
    expect(picked.res.decodeErrors).toBe(4);
    expect(picked.err).toBe(full.err);
  });

  test("replay: a stream named after data prunes data to that stream's columns", async () => {
    const sql = 'CREATE STREAM s1 () WITH (TYPE="stdin");\nCREATE STREAM s2 () WITH (TYPE="stdin");\nSELECT s1.a AS a, s2.b AS b FROM s1 INNER JOIN s2 ON s1.k = s2.k GROUP BY TUMBLINGWINDOW(ss, 1)';
    const r = await run(sql, ['{"ts":1,"data":{"k":1,"a":5,"b":7},"stream":"s1"}', '{"ts":2,"data":{"k":1,"a":6,"b":8},"stream":"s2"}'], { replay: true });
    expect(r.err).toBe("");
    expect(r.out).toBe('{"a":5,"b":8}\n');
  });

  test("ignoreCase reads columns by folded name: the full decoder keeps every member", async () => {
    const r = await run("SELECT temp FROM s", ['{"TEMP":21}'], { ignoreCase: true });
    expect(r.out).toBe('{"temp":21}\n');
  });
});
