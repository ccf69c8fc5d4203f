/**
 * The long hostile-input run (docs/hostile-suite.md): against a daemon it starts, seeded random
 * request bodies for every route of the live route table and mutated payloads for every format
 * case (test/hostile/payload-cases.ts), while a canary rule runs. Fails (exit 1) on a 5xx, a
 * request slower than --hang-ms, the daemon ending, a `/ping` slower than --ping-ms, the canary
 * rule running but receiving nothing, or a format rule whose good payload stops coming out.
 *   node_modules/.bin/bun bench/hostile.ts [--seed N] [--iterations N] [--minutes M] [--ping-ms 500] [--hang-ms 2000]
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { request as httpRequest } from "node:http";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { prng } from "../test/helpers/prng.ts";
import { FORMAT_CASES, PROTO_SCHEMA, streamSql, type FormatCase } from "../test/hostile/payload-cases.ts";
import { concrete, endsDaemon, freePort, seed, startFloe, surface, tempHome, type SurfaceRoute } from "../test/hostile/surface.ts";
import { payload, requestBody } from "./hostile-gen.ts";

const { values: flags } = parseArgs({
  options: { seed: { type: "string" }, iterations: { type: "string", default: "3000" }, minutes: { type: "string", default: "0" }, "ping-ms": { type: "string", default: "500" }, "hang-ms": { type: "string", default: "2000" }, verbose: { type: "boolean", default: false } },
});
const SEED = flags.seed !== undefined ? Number(flags.seed) : Math.floor(Math.random() * 2 ** 31);
const ITERATIONS = Number(flags.iterations);
const DEADLINE = Number(flags.minutes) > 0 ? Date.now() + Number(flags.minutes) * 60_000 : Infinity;
const PING_MS = Number(flags["ping-ms"]);
const HANG_MS = Number(flags["hang-ms"]);
console.log(`seed ${SEED} (replay: bun bench/hostile.ts --seed ${SEED} --iterations ${ITERATIONS}${flags.minutes !== "0" ? ` --minutes ${flags.minutes}` : ""})`);

const rand = prng(SEED);
const ROUTES = surface().filter((r) => !endsDaemon(r));
const port = freePort();
// /metrics on the REST port, so every route of the surface is served.
const restPort = freePort();
const d = await startFloe(tempHome(), { KUIPER__SOURCE__HTTPSERVERPORT: String(port), KUIPER__BASIC__RESTPORT: String(restPort), KUIPER__BASIC__PROMETHEUS: "true", KUIPER__BASIC__PROMETHEUSPORT: String(restPort) });
let ended = false;
void d.proc.exited.then(() => (ended = true));

interface Failure {
  readonly iteration: number;
  readonly what: string;
  readonly request?: string;
  readonly bodyFile?: string;
}
const failures: Failure[] = [];
const perRoute = new Map<string, number>();
const statuses = new Map<number | string, number>();
const slowest: { ms: number; what: string }[] = [];
const notes: string[] = [];
let iteration = 0;
let lastRequest = "";

const key = (r: SurfaceRoute) => `${r.method} ${r.path}`;

/**
 * The 500s the spec asks for (rest-api.md §1.7: floe answers 500 where eKuiper's handler panics),
 * by route and exact message; any other 5xx is a failure.
 */
const SPEC_500: Record<string, string> = {
  "PUT /schemas/{type}/{name}": "Invalid body: schema type or name do not match the path",
};

function fail(what: string, body?: Uint8Array): void {
  let bodyFile: string | undefined;
  if (body) writeFileSync((bodyFile = join(d.dir, `failure-${failures.length}.body`)), body);
  failures.push({ iteration, what, request: lastRequest, bodyFile });
  console.log(`FAIL at iteration ${iteration}: ${what}${lastRequest ? ` (after ${lastRequest})` : ""}${bodyFile ? `; body in ${bodyFile}` : ""}`);
}

function note(ms: number, what: string): void {
  slowest.push({ ms, what });
  slowest.sort((a, b) => b.ms - a.ms);
  slowest.length = Math.min(slowest.length, 8);
}

/** A GET or HEAD with a body (fetch refuses one; `GET /rules/tags/match` reads it); an event stream answers at its headers. */
function bodiedGet(method: string, url: string, body: Uint8Array, contentType: string | undefined): Promise<number> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => req.destroy(Object.assign(new Error("timeout"), { name: "TimeoutError" })), HANG_MS);
    const req = httpRequest(url, { method, headers: { "Content-Length": String(body.length), ...(contentType ? { "Content-Type": contentType } : {}) } }, (res) => {
      const done = () => {
        clearTimeout(timer);
        resolve(res.statusCode ?? 0);
      };
      if (String(res.headers["content-type"]).startsWith("text/event-stream")) {
        done();
        req.destroy();
        return;
      }
      res.on("data", () => {});
      res.on("end", done);
    });
    req.on("error", (e) => {
      clearTimeout(timer);
      reject(e);
    });
    req.end(body);
  });
}

interface Answer {
  /** 0 when there was no answer. */
  readonly status: number;
  readonly ms: number;
  /** Why the answer is wrong whatever its status: none, a hang, a JSON body that is not JSON. */
  readonly problem?: string;
  /** A 500 the spec asks for (SPEC_500). */
  readonly specified?: boolean;
}

/** One request with the hang bound; the time to its whole answer (an event stream: to its headers). */
async function request(method: string, url: string, body: Uint8Array | undefined, contentType: string | undefined, spec500?: string): Promise<Answer> {
  const t0 = performance.now();
  try {
    if (body && (method === "GET" || method === "HEAD")) return { status: await bodiedGet(method, url, body, contentType), ms: performance.now() - t0 };
    const res = await fetch(url, { method, body, headers: contentType ? { "Content-Type": contentType } : {}, signal: AbortSignal.timeout(HANG_MS) });
    const type = res.headers.get("content-type") ?? "";
    if (type.startsWith("text/event-stream")) {
      await res.body?.cancel();
      return { status: res.status, ms: performance.now() - t0 };
    }
    const text = await res.text();
    const ms = performance.now() - t0;
    if (res.status === 500 && spec500 !== undefined && text === `{"error":1000,"message":"${spec500}"}\n`) return { status: 500, ms, specified: true };
    if (type.startsWith("application/json") && method !== "HEAD") {
      try {
        JSON.parse(text);
      } catch (e) {
        return { status: res.status, ms, problem: `a JSON answer that is not JSON (${(e as Error).message}): ${text.slice(0, 200)}` };
      }
    }
    return { status: res.status, ms };
  } catch (e) {
    const problem = ended ? "the daemon ended" : (e as Error).name === "TimeoutError" ? `no answer within ${HANG_MS} ms` : `no answer: ${(e as Error).message}`;
    return { status: 0, ms: performance.now() - t0, problem };
  }
}

async function ping(): Promise<void> {
  const p = await request("GET", `${d.base}/ping`, undefined, undefined);
  if (p.status !== 200) fail(`/ping answered ${p.problem ?? p.status}`);
  else if (p.ms > PING_MS) fail(`/ping took ${p.ms.toFixed(0)} ms (budget ${PING_MS} ms)`);
}

/** The run's own requests (set-up, checks): bounded too, a hang here is the daemon's. */
async function call(method: string, path: string, body?: object): Promise<{ status: number; text: string }> {
  const t0 = performance.now();
  try {
    const res = await fetch(d.base + path, { method, body: body && JSON.stringify(body), headers: { "Content-Type": "application/json" }, signal: AbortSignal.timeout(10_000) });
    return { status: res.status, text: await res.text() };
  } catch (e) {
    if (!ended) fail(`the run's own ${method} ${path} got no answer after ${(performance.now() - t0).toFixed(0)} ms: ${(e as Error).message}`);
    return { status: 0, text: "" };
  }
}

async function json(path: string): Promise<Record<string, unknown> | undefined> {
  const r = await call("GET", path);
  if (r.status !== 200) return undefined;
  try {
    return JSON.parse(r.text) as Record<string, unknown>;
  } catch (e) {
    fail(`GET ${path} answered 200 with a body that is not JSON (${(e as Error).message}): ${r.text.slice(0, 300)}`);
    return undefined;
  }
}

const out = (c: FormatCase) => join(d.dir, `${c.id}.jsonl`);
const lastLine = (c: FormatCase) => (existsSync(out(c)) ? readFileSync(out(c), "utf8").trimEnd().split("\n").at(-1) : undefined);

/** Creates what a request may have deleted (imports replace everything): the schema, the canary, the format rules. */
async function ensure(initial = false): Promise<void> {
  if ((await call("GET", `/schemas/protobuf/${PROTO_SCHEMA.name}`)).status !== 200) await call("POST", "/schemas/protobuf", PROTO_SCHEMA);
  const want: [string, string, object][] = [
    ["fz_canary", 'CREATE STREAM fz_canary () WITH (TYPE="simulator", CONF_KEY="fz_canary")', { id: "fz_canary", sql: "SELECT * FROM fz_canary", actions: [{ nop: {} }] }],
    ...FORMAT_CASES.map((c): [string, string, object] => [`p_${c.id}`, streamSql(c), { id: `p_${c.id}`, sql: `SELECT * FROM p_${c.id}`, actions: [{ file: { path: out(c), fileType: "lines", sendSingle: true } }] }]),
  ];
  await call("PUT", "/metadata/sources/simulator/confKeys/fz_canary", { data: [{ a: 1 }], interval: 20, loop: true });
  for (const [id, sql, rule] of want) {
    const st = await json(`/rules/${id}/status`);
    if (st?.status === "running") continue;
    if (!initial) notes.push(`${id} ${st ? `was ${String(st.status)}` : "was gone"} after iteration ${iteration}: recreated`);
    await call("DELETE", `/rules/${id}`);
    await call("DELETE", `/streams/${id}`);
    await call("POST", "/streams", { sql });
    await call("POST", "/rules", rule);
  }
}

/** The canary's run being watched (its lastStartTimestamp), its rows then, when they last grew; looks that saw it grow. */
let canary = { start: 0, rows: 0, at: 0 };
let canaryLooks = 0;
let canaryGrew = 0;

/**
 * The canary rule, while one run of it lasts, must keep receiving (a row every 20 ms): nothing for
 * 1 s is a failure. Requests stop and delete it often (bulk stops, imports), so a look at a new
 * run only starts watching it.
 */
async function checkCanary(): Promise<void> {
  const st = await json("/rules/fz_canary/status");
  if (st?.status !== "running") return;
  const start = Number(st.lastStartTimestamp);
  const rows = Number(st.source_fz_canary_0_records_in_total ?? 0);
  const now = Date.now();
  if (start !== canary.start) {
    canary = { start, rows, at: now };
    return;
  }
  canaryLooks++;
  if (rows > canary.rows) {
    canaryGrew++;
    canary = { start, rows, at: now };
  } else if (now - canary.at > 1000) fail(`the canary rule is running but received nothing for ${now - canary.at} ms`);
}

/** The case's good payload still comes out intact (within the hang bound). */
async function checkFormat(c: FormatCase): Promise<void> {
  const res = await request("POST", `http://127.0.0.1:${port}/${c.id}`, c.good.payload, undefined);
  if (res.status !== 200) return void fail(`${c.id}: the good payload was answered ${res.problem ?? res.status}`);
  const t0 = Date.now();
  while (lastLine(c) !== c.good.row) {
    if (Date.now() - t0 > HANG_MS) {
      const st = Object.entries((await json(`/rules/p_${c.id}/status`)) ?? {}).filter(([k]) => /status|message|exceptions_total|last_exception$|records_(in|out)_total/.test(k));
      return void fail(`${c.id}: the good payload did not come out within ${HANG_MS} ms (last line: ${lastLine(c)?.slice(0, 120)}; rule status ${JSON.stringify(Object.fromEntries(st)).slice(0, 600)})`);
    }
    await Bun.sleep(10);
  }
}

try {
  await seed(d);
  await ensure(true);
  const started = Date.now();
  for (; iteration < ITERATIONS && Date.now() < DEADLINE && !ended; iteration++) {
    if (rand() < 0.8) {
      const r = ROUTES[Math.floor(rand() * ROUTES.length)]!;
      const { body, contentType } = requestBody(rand, r.method, r.path);
      const path = concrete(r.path);
      lastRequest = `${r.method} ${path} (${body?.length ?? 0} bytes)`;
      perRoute.set(key(r), (perRoute.get(key(r)) ?? 0) + 1);
      const res = await request(r.method, d.base + path, body, contentType, SPEC_500[key(r)]);
      const shown = res.specified ? "500 (the spec's)" : res.status || "none";
      statuses.set(shown, (statuses.get(shown) ?? 0) + 1);
      note(res.ms, lastRequest);
      if (flags.verbose) console.log(`${iteration} ${lastRequest} -> ${res.problem ?? shown} ${res.ms.toFixed(0)} ms`);
      if (res.problem || (res.status >= 500 && !res.specified)) fail(`${r.method} ${path}: ${res.problem ?? `answered ${res.status}`} after ${res.ms.toFixed(0)} ms`, body);
    } else {
      const c = FORMAT_CASES[Math.floor(rand() * FORMAT_CASES.length)]!;
      const p = payload(rand, c);
      lastRequest = `payload to ${c.id} (${p.length} bytes)`;
      perRoute.set(`payload ${c.id}`, (perRoute.get(`payload ${c.id}`) ?? 0) + 1);
      const res = await request("POST", `http://127.0.0.1:${port}/${c.id}`, p, undefined);
      const shown = `payload ${res.status || res.problem}`;
      statuses.set(shown, (statuses.get(shown) ?? 0) + 1);
      note(res.ms, lastRequest);
      if (flags.verbose) console.log(`${iteration} ${lastRequest} -> ${res.problem ?? res.status} ${res.ms.toFixed(0)} ms`);
      // 404: a request deleted the rule; refused: every httppush rule was stopped, so the data
      // server closed (ensure() recreates them); 503: the buffer was full (counted by the source).
      if (res.problem?.includes("ECONNREFUSED") && (await json(`/rules/p_${c.id}/status`))?.status !== "running") await ensure();
      else if (res.status !== 200 && res.status !== 404 && res.status !== 503) fail(`${lastRequest}: ${res.problem ?? `answered ${res.status}`}`, p);
      if (res.status === 200 && rand() < 0.3) await checkFormat(c);
    }
    if (ended) break;
    await ping();
    if (iteration % 10 === 9) await checkCanary();
    if (iteration % 50 === 49) await ensure();
  }
  if (ended) fail(`the daemon ended (exit ${d.proc.exitCode}); stderr tail: ${d.stderr().slice(-2000)}`);
  const secs = (Date.now() - started) / 1000;
  console.log(`\n${iteration} iterations in ${secs.toFixed(0)} s, seed ${SEED}`);
  console.log("\nrequests per route:");
  for (const [k, n] of [...perRoute].sort((a, b) => b[1] - a[1])) console.log(`  ${String(n).padStart(5)}  ${k}`);
  console.log("\nstatus histogram:");
  for (const [k, n] of [...statuses].sort((a, b) => String(a[0]).localeCompare(String(b[0])))) console.log(`  ${String(k).padEnd(14)} ${n}`);
  console.log(`\ncanary: ${canaryLooks} looks at a running canary, ${canaryGrew} of them saw new rows`);
  console.log("\nslowest:");
  for (const s of slowest) console.log(`  ${s.ms.toFixed(0).padStart(6)} ms  ${s.what}`);
  if (notes.length) console.log(`\nrecreated by the run (a request deleted or stopped them; not failures):\n  ${notes.slice(0, 20).join("\n  ")}${notes.length > 20 ? `\n  … ${notes.length - 20} more` : ""}`);
  console.log(failures.length ? `\n${failures.length} failure(s), seed ${SEED}:` : "\nno failures");
  for (const f of failures) console.log(`  iteration ${f.iteration}: ${f.what}${f.request ? `\n    request: ${f.request}` : ""}${f.bodyFile ? `\n    body: ${f.bodyFile}` : ""}`);
} finally {
  if (!ended) await d.stop();
}
process.exit(failures.length ? 1 : 0);
