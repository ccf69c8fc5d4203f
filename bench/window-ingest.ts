/**
 * The window path alone: W2/W4/W5's rule planned in-process, 1,000,000 tuples built
 * before the clock starts (their `device` a substring of a line, as the pick decoder makes it),
 * then fed through the topology — window, aggregate, project, stdout sink encoding — on a virtual
 * clock. Prints the CPU time of that loop only, so the decode and the file read (the replay's
 * other half, bench/replay.ts) stay out of it. With `--base DIR` (another checkout, e.g. a `git
 * worktree` of the starting commit with node_modules linked) the two trees run in turn, A B A B,
 * each run in its own process, and the outputs (bytes and a hash) must match. `--evaluator
 * buffered` holds the rows (windows §3.4) instead of accumulators, under the rule's row and byte
 * cap (ops/window/held-rows.ts) in a tree that has one: the cost of sizing each row.
 *   node_modules/.bin/bun bench/window-ingest.ts [w2|w4|w5] [--runs 5] [--base DIR] [--evaluator buffered]
 */
import { existsSync } from "node:fs";
import { join } from "node:path";

const ROOT = join(import.meta.dir, "..");
const args = process.argv.slice(2);
const opt = (name: string, def: string) => {
  const i = args.indexOf(name);
  return i >= 0 ? args.splice(i, 2)[1]! : def;
};
const DEVICES: Record<string, number> = { w2: 1000, w4: 10_000, w5: 2000 };
const RECORDS = 1_000_000;
const RATE = 10_000;
const T0 = 1_700_000_000_000;

interface Result {
  cpuMs: number;
  bytes: number;
  hash: number;
}

/** One measured run of `w` with the modules of `tree` (the child process). */
async function child(tree: string, w: string, evaluator: string): Promise<Result> {
  // The tree may predate the renames createCatalog → createFunctionRegistry and planRule → planSelect.
  const fns = await import(join(tree, "lib/functions/index.ts"));
  const { Tuple } = await import(join(tree, "lib/expr/row.ts"));
  const { UTC } = await import(join(tree, "lib/value/time.ts"));
  const { StdoutSink } = await import(join(tree, "lib/connectors/stdio/stdout.ts"));
  const planner = await import(join(tree, "lib/plan/plan.ts"));
  const { streamDef } = await import(join(tree, "lib/plan/streams.ts"));
  const { Topology } = await import(join(tree, "lib/runtime/topology.ts"));
  const { parseRuleFile } = await import(join(tree, "lib/sql/parse.ts"));
  const { VirtualClock } = await import(join(tree, "lib/ops/window/clock.ts"));
  const text = await Bun.file(join(ROOT, `bench/rules/${w}.sql`)).text();
  const rule = text
    .split("\n")
    .filter((l) => !l.startsWith("--"))
    .join(" ");
  const functions = (fns.createFunctionRegistry ?? fns.createCatalog)();
  const file = parseRuleFile(`CREATE STREAM telem () WITH (FORMAT="JSON");\n${rule}`, functions);
  const defs = new Map(file.creates.map((c: { name: string }) => [c.name, streamDef(c)]));
  const clock = new VirtualClock(T0);
  const env = { now: () => clock.now(), zone: UTC, ruleId: "r", ruleStart: T0 };
  const planned = (planner.planSelect ?? planner.planRule)(file.select, defs, { env, zone: UTC, lateTolerance: 1000, isEventTime: false, windowEvaluator: evaluator, functions });
  // The defaults of windowMaxRows / windowMaxBytes: a 10 s window of W4 holds 100,000 rows, under both.
  const budgetFile = join(tree, "lib/core/byte-budget.ts");
  const windowBudget = existsSync(budgetFile) ? new (await import(budgetFile)).ByteBudget(256 * 1024 * 1024, 1_000_000) : undefined;
  let bytes = 0;
  let hash = 0;
  const write = (t: string) => {
    bytes += t.length;
    for (let i = 0; i < t.length; i += 7) hash = (hash * 31 + t.charCodeAt(i)) | 0;
  };
  const sink = new StdoutSink("lines", write, () => clock.now());
  const topo = new Topology(planned.plan, { now: () => clock.now(), sendError: true, clock, zone: UTC, windowBudget }, [sink]);
  // The replay files' values (bench/replay-gen.ts): integral ones are int64, as the decoder types them.
  const devices = DEVICES[w]!;
  const ts = new Float64Array(RECORDS);
  const data: Record<string, unknown>[] = new Array(RECORDS);
  const num = (x: number) => (Number.isInteger(x) ? BigInt(x) : x);
  for (let k = 0; k < RECORDS; k++) {
    ts[k] = T0 + Math.floor((k * 1000) / RATE);
    const line = `{"device":"dev_${k % devices}"}`;
    data[k] = { device: line.slice(11, line.length - 2), temp: num(20.0 + (k % 150) / 10), speed: num((k % 1300) / 10) };
  }
  Bun.gc(true);
  const c0 = process.cpuUsage();
  for (let k = 0; k < RECORDS; k++) {
    clock.advance(ts[k]!);
    topo.ingest("telem", new Tuple(data[k]!, null, clock.now(), "telem"));
    if ((k & 1023) === 0) sink.flush();
  }
  clock.advance(ts[RECORDS - 1]! + 60_000);
  sink.flush();
  const c = process.cpuUsage(c0);
  return { cpuMs: (c.user + c.system) / 1000, bytes, hash };
}

async function spawnRun(tree: string, w: string, evaluator: string): Promise<Result> {
  const p = Bun.spawn([process.execPath, import.meta.path, "--child", tree, w, evaluator], { stdout: "pipe", stderr: "inherit" });
  const out = await new Response(p.stdout).text();
  if ((await p.exited) !== 0) throw new Error(`run of ${tree} failed`);
  return JSON.parse(out) as Result;
}

const childAt = args.indexOf("--child");
if (childAt >= 0) {
  console.log(JSON.stringify(await child(args[childAt + 1]!, args[childAt + 2]!, args[childAt + 3]!)));
} else {
  const runs = Number(opt("--runs", "5"));
  const base = opt("--base", "");
  const evaluator = opt("--evaluator", "auto");
  const w = args[0] ?? "w4";
  if (!(w in DEVICES)) throw new Error(`workload ${w}: one of ${Object.keys(DEVICES).join(", ")}`);
  const median = (xs: number[]) => xs.slice().sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const mine: number[] = [];
  const theirs: number[] = [];
  const ratios: number[] = [];
  let ref: Result | undefined;
  for (let i = 0; i < runs; i++) {
    const a = await spawnRun(ROOT, w, evaluator);
    mine.push(a.cpuMs);
    if (ref && (a.bytes !== ref.bytes || a.hash !== ref.hash)) throw new Error("outputs differ between runs");
    ref = a;
    if (base) {
      const b = await spawnRun(base, w, evaluator);
      if (b.bytes !== a.bytes || b.hash !== a.hash) throw new Error(`outputs differ: ${a.bytes}/${a.hash} vs base ${b.bytes}/${b.hash}`);
      theirs.push(b.cpuMs);
      ratios.push(a.cpuMs / b.cpuMs);
    }
  }
  const f = (xs: number[]) => xs.map((x) => x.toFixed(0)).join(" ");
  console.log(`${w} window path, ${RECORDS.toLocaleString("en-US")} tuples: CPU ms ${f(mine)} (median ${median(mine).toFixed(0)}); output ${ref!.bytes} bytes`);
  if (base) {
    console.log(`${w} base ${base}: CPU ms ${f(theirs)} (median ${median(theirs).toFixed(0)}); outputs identical`);
    console.log(`${w} this / base per pair: ${ratios.map((r) => r.toFixed(3)).join(" ")} (median ${median(ratios).toFixed(3)})`);
  }
}
