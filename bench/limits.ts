/**
 * What the documented limits cost (docs/daemon.md, "Errors, limits and the safe start"): how long the one-threaded daemon
 * is busy with the largest definitions it accepts.
 *  1. The SQL parser at MAX_SQL_LENGTH (32 Ki characters) on three shapes: a wide projection,
 *     one long string literal, and parentheses nested until the parser's stack gives out.
 *  2. The depth guard on a JSON body at the REST body limit (10 MiB).
 *  3. A live daemon: the latency of GET /ping sent while a body at the limit (an upload of
 *     10 MiB − 1 KiB) and an 8 MB SQL rule (refused unread: definition bodies stop at 256 KiB) and a rule just below that
 *     are being posted (the client shares the machine).
 *   node_modules/.bin/bun bench/limits.ts
 */
import { createFunctionRegistry } from "../lib/functions/index.ts";
import { textTooDeep } from "../lib/value/json-depth.ts";
import { MAX_SQL_LENGTH, parseSelect } from "../lib/sql/parse.ts";
import { startFloe } from "../test/server/daemon.ts";

const functions = createFunctionRegistry();

function best(f: () => void, runs = 5): number {
  let b = Infinity;
  for (let i = 0; i < runs; i++) {
    const t = performance.now();
    try {
      f();
    } catch {
      // the deep shape ends in a parse error: its time is what counts
    }
    b = Math.min(b, performance.now() - t);
  }
  return b;
}

const fill = (unit: (i: number) => string, sep: string, room: number): string => {
  const parts: string[] = [];
  let n = 0;
  for (let i = 0; n < room; i++) {
    const u = unit(i);
    parts.push(u);
    n += u.length + sep.length;
  }
  return parts.join(sep);
};

const room = MAX_SQL_LENGTH - 40;
const shapes: Record<string, string> = {
  "wide projection": `SELECT ${fill((i) => `CASE WHEN t${i} > ${i} THEN abs(t${i} * 2.5) ELSE concat("x", n${i}) END AS f${i}`, ", ", room - 200)} FROM demo`,
  "one string literal": `SELECT "${"a".repeat(room)}" AS s FROM demo`,
  "nested parentheses": `SELECT ${"(".repeat(room / 2 - 10)}1${")".repeat(room / 2 - 10)} FROM demo`,
};
for (const [name, sql] of Object.entries(shapes)) console.log(`parse ${name} (${sql.length} chars): ${best(() => parseSelect(sql, functions)).toFixed(1)} ms`);

const body = JSON.stringify({ name: "big.txt", content: "x".repeat(10 * 1024 * 1024 - 1024) });
const rows = JSON.stringify({ rows: Array.from({ length: 120_000 }, (_, i) => ({ id: i, v: [i, { w: i }] })) });
console.log(`depth guard on a ${(body.length / 1048576).toFixed(1)} MiB string body: ${best(() => textTooDeep(body)).toFixed(1)} ms; on a ${(rows.length / 1048576).toFixed(1)} MiB body of objects: ${best(() => textTooDeep(rows)).toFixed(1)} ms`);

const d = await startFloe();
await d.call("POST", "/streams", { sql: 'CREATE STREAM demo () WITH (TYPE="memory", DATASOURCE="demo")' });
try {
  const idle: number[] = [];
  for (let i = 0; i < 20; i++) {
    const t = performance.now();
    await d.call("GET", "/ping");
    idle.push(performance.now() - t);
  }
  idle.sort((a, b) => a - b);
  console.log(`GET /ping alone: median ${idle[10]!.toFixed(1)} ms, slowest ${idle[19]!.toFixed(1)} ms`);
  const sql = `SELECT ${fill((i) => `temperature_${i}`, ", ", 8_000_000)} FROM demo`;
  for (const [name, path, payload] of [
    ["upload of 10 MiB − 1 KiB", "/config/uploads", body],
    ["8 MB SQL rule (413)", "/rules", JSON.stringify({ id: "huge", sql, actions: [{ nop: {} }] })],
    ["rule of 250 KiB (the definition limit is 256 KiB)", "/rules", JSON.stringify({ id: "wide", sql: "SELECT * FROM demo", actions: [{ nop: {} }], triggered: false, name: "n".repeat(250 * 1024) })],
    ["stream of 30 Ki characters of SQL", "/streams", JSON.stringify({ sql: `CREATE STREAM wide (${fill((i) => `c${i} bigint`, ", ", 30_000)}) WITH (TYPE="memory", DATASOURCE="t")` })],
  ] as const) {
    const pings: number[] = [];
    let done = false;
    // Encoded up front, so the client's own work does not delay the pings.
    const bytes = new TextEncoder().encode(payload);
    const post = fetch(d.base + path, { method: "POST", body: bytes, headers: { "Content-Type": "application/json" } }).then((r) => ((done = true), r.status));
    while (!done) {
      const t = performance.now();
      await d.call("GET", "/ping");
      pings.push(performance.now() - t);
    }
    console.log(`${name}: status ${await post}, ${pings.length} pings meanwhile, slowest ${Math.max(...pings).toFixed(1)} ms`);
  }
} finally {
  await d.stop();
}
