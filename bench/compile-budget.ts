/**
 * What uploading a slow-to-compile definition costs the one-threaded daemon (the compile budget,
 * lib/value/compile-budget.ts): for each kind — protobuf schemas of 8,000 and 300,000 fields as
 * JSON `content` and as a multipart file, a deeply nested SQL expression, a graph rule of many
 * nodes, a deep dataTemplate, a giant UDF — and then for definitions at the default limits (what
 * an accepted definition may still cost), the status and time of the request and the slowest
 * `GET /ping` sent back to back while it runs.
 *   node_modules/.bin/bun bench/compile-budget.ts [name filter…]
 */
import { startFloe } from "../test/server/daemon.ts";
import { deepSql, deepTemplate, giantUdf, hostileDefinitions, hugeGraph, wideProto, type HostileDefinition } from "../test/hostile/compile-cases.ts";

const JSON_HEADERS = { "Content-Type": "application/json" };
const post = (name: string, path: string, body: unknown, method = "POST"): Omit<HostileDefinition, "kind"> => ({ name, method, path, headers: JSON_HEADERS, body: () => JSON.stringify(body) });

/** Definitions at the default limits, in the order a user would send them (schema, stream over it, rule that decodes with it). */
function atTheLimits(): Omit<HostileDefinition, "kind">[] {
  const protoAtLimit = `syntax = "proto3";\n${Array.from({ length: 4 }, (_, m) => wideProto(511).replace('syntax = "proto3";\n', "").replace("message W", `message W${m}`)).join("")}`;
  return [
    post("at the limit: protobuf of 4 messages x 511 fields (2,048 declarations)", "/schemas/protobuf", { name: "edge", content: protoAtLimit }),
    post("at the limit: CREATE STREAM over it", "/streams", { sql: 'CREATE STREAM edge_s () WITH (TYPE="memory", DATASOURCE="edge", FORMAT="protobuf", SCHEMAID="edge.W0")' }),
    post("at the limit: a rule decoding it (started)", "/rules", { id: "edge_r", sql: "SELECT * FROM edge_s", actions: [{ nop: {} }] }),
    post("at the limit: SQL nested 120 deep", "/rules", { id: "edge_sql", sql: deepSql(120), actions: [{ nop: {} }] }),
    post("at the limit: graph of 50 nodes", "/rules", { id: "edge_graph", graph: hugeGraph(48) }),
    post("at the limit: dataTemplate nested 64 deep", "/rules", { id: "edge_tpl", sql: "SELECT * FROM hostile_s", actions: [{ nop: { dataTemplate: deepTemplate(64) } }] }),
    post("at the limit: dataTemplate of 16 KiB", "/rules", { id: "edge_tpl2", sql: "SELECT * FROM hostile_s", actions: [{ nop: { dataTemplate: "{{.a}}".repeat(2730) } }] }),
    post("at the limit: UDF source of 63 KiB", "/udf/javascript", { id: "edge_udf", script: giantUdf("edge_udf", 63 * 1024) }),
  ];
}

const only = process.argv.slice(2);
const d = await startFloe();
await d.call("POST", "/streams", { sql: 'CREATE STREAM hostile_s () WITH (TYPE="memory", DATASOURCE="hostile")' });
try {
  for (const c of [...hostileDefinitions(), ...atTheLimits()]) {
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
      }
    })();
    const t = performance.now();
    const r = await fetch(d.base + c.path, { method: c.method, body, headers: c.headers, signal: AbortSignal.timeout(600_000) });
    const text = await r.text();
    const took = performance.now() - t;
    // A started rule compiles its decoders and sinks after the answer: let the pings see that too.
    if (c.path === "/rules") for (let i = 0; i < 20; i++) await fetch(`${d.base}/ping`);
    stop = true;
    await pinger;
    console.log(`${c.name}: ${r.status} in ${took.toFixed(0)} ms, slowest /ping ${worst.toFixed(0)} ms — ${text.slice(0, 170).trim()}`);
  }
} finally {
  await d.stop();
}
