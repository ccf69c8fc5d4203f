/**
 * What uploading a slow-to-compile definition costs the one-threaded daemon: for each kind (a
 * protobuf schema of 8,000 and of 300,000 fields as JSON `content` and as a multipart file, a deeply
 * nested SQL expression, a graph rule of many nodes, a deep dataTemplate, a giant UDF), the status
 * and time of the request and the slowest `GET /ping` sent every 10 ms while it runs.
 *   node_modules/.bin/bun bench/compile-budget.ts [kind…]
 */
import { startFloe } from "../test/server/daemon.ts";
import { hostileDefinitions } from "../test/hostile/compile-cases.ts";

const only = process.argv.slice(2);
const d = await startFloe();
await d.call("POST", "/streams", { sql: `CREATE STREAM hostile_s () WITH (TYPE="memory", DATASOURCE="hostile")` });
try {
  for (const c of hostileDefinitions()) {
    if (only.length && !only.some((o) => c.name.includes(o))) continue;
    // Built before the clock starts: the client shares this thread with the pinger.
    const body = c.body();
    let worst = 0;
    let stop = false;
    const pinger = (async () => {
      while (!stop) {
        const t = performance.now();
        await fetch(`${d.base}/ping`);
        worst = Math.max(worst, performance.now() - t);
        await Bun.sleep(10);
      }
    })();
    const t = performance.now();
    const r = await fetch(d.base + c.path, { method: c.method, body, headers: c.headers, signal: AbortSignal.timeout(600_000) });
    const text = await r.text();
    const took = performance.now() - t;
    stop = true;
    await pinger;
    console.log(`${c.name}: ${r.status} in ${took.toFixed(0)} ms, slowest /ping ${worst.toFixed(0)} ms — ${text.slice(0, 160).trim()}`);
  }
} finally {
  await d.stop();
}
