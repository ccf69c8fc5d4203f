/**
 * The projection of a fixed key set (ProjectOp's sorted rows, built by one object literal when no
 * value is absent): the same keys and values as when some are absent or the names are unusual.
 */
import { expect, test } from "bun:test";
import { UTC } from "../../lib/value/time.ts";
import { runPipe } from "../../lib/pipe/direct.ts";

async function* batches(lines: string[]): AsyncIterable<string[]> {
  yield lines;
}

async function run(sql: string, lines: string[]): Promise<string> {
  let out = "";
  let err = "";
  await runPipe({ sql, options: {}, input: batches(lines), replay: false, emit: "rows", onEof: "flush", zone: UTC, write: (t) => void (out += t), warn: (t) => void (err += t) });
  expect(err).toBe("");
  return out;
}

const LINES = ['{"z":1,"y":"q","x":2.5,"w":true}', '{"z":1,"x":2.5}', '{"y":null,"z":null}'];

test("full rows, rows with absent values and a present null: numeric, quoted, non-ASCII and prototype names", async () => {
  const out = await run('SELECT z, y AS `10`, x AS `2`, w AS `é`, x * 2 AS `a"b`, z + 1 AS constructor FROM s', LINES);
  expect(out).toBe('{"10":"q","2":2.5,"a\\"b":5,"constructor":2,"z":1,"é":true}\n{"2":2.5,"a\\"b":5,"constructor":2,"z":1}\n{"z":null}\n');
});

test("an alias named __proto__ is assigned as before (it sets no key)", async () => {
  const out = await run("SELECT z, z AS `__proto__`, x FROM s", LINES);
  expect(out).toBe('{"x":2.5,"z":1}\n{"x":2.5,"z":1}\n{"z":null}\n');
});

test("a row of many keys (past the literal's limit) is built key by key", async () => {
  const names = Array.from({ length: 40 }, (_, i) => `k${i}`);
  const out = await run(`SELECT ${names.map((n, i) => `z + ${i} AS ${n}`).join(", ")} FROM s`, [LINES[0]!]);
  const want: Record<string, number> = {};
  for (const [i, n] of names.entries()) want[n] = 1 + i;
  expect(JSON.parse(out)).toEqual(want);
});
