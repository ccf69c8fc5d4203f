/**
 * Per-call cost of a JavaScript UDF in its QuickJS sandbox against a plain closure doing the same
 * work on floe values, in ns/call (median of ROUNDS rounds of N calls each, after a warm-up).
 *
 *   node_modules/.bin/bun bench/udf.ts [N]
 */
import { createFunctionRegistry } from "../lib/functions/index.ts";
import { UTC } from "../lib/value/time.ts";
import type { Value } from "../lib/value/values.ts";
import { invoke } from "../lib/functions/invoke.ts";
import { createSandbox, loadSandbox } from "../lib/functions/js-sandbox.ts";
import { registerScript } from "../lib/functions/js-udf.ts";
import type { CallCtx } from "../lib/functions/registry.ts";

const functions = createFunctionRegistry();

const N = Number(process.argv[2] ?? 200_000);
const ROUNDS = 5;

function nsPerCall(f: (i: number) => unknown): number {
  for (let i = 0; i < Math.min(N, 20_000); i++) f(i);
  const runs: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    const t = Bun.nanoseconds();
    for (let i = 0; i < N; i++) f(i);
    runs.push((Bun.nanoseconds() - t) / N);
  }
  runs.sort((a, b) => a - b);
  return runs[ROUNDS >> 1]!;
}

await loadSandbox();
await registerScript(functions, { id: "f", description: "", script: "function f(a, b) { return a * b + 1; }", isAgg: false });
const fd = functions.lookup("f")!;
const ctx: CallCtx = { name: "f", env: { now: () => 0, zone: UTC, ruleId: "bench", ruleStart: 0 }, state: undefined };
const box = await createSandbox("f", "function f(a, b) { return a * b + 1; }");
const strBox = await createSandbox("s", "function s(x) { return x.toUpperCase(); }");
const objBox = await createSandbox("o", "function o(r) { return r.a * r.b + 1; }");

// The closure a native floe function would be: floe values in, a floe value out.
const closure = (args: Value[]): Value => {
  const r = Number(args[0]) * Number(args[1]) + 1;
  return Number.isSafeInteger(r) ? BigInt(r) : r;
};

const ints: Value[][] = [];
const floats: Value[][] = [];
const rows: Value[][] = [];
for (let i = 0; i < 1024; i++) {
  ints.push([BigInt(i), 3n]);
  floats.push([i + 0.5, 1.25]);
  rows.push([{ a: BigInt(i), b: 3n, name: "sensor-" + i }]);
}
const strs: Value[][] = ints.map((_, i) => ["sensor-" + i]);

const results: [string, number][] = [
  ["plain closure f(a,b)=a*b+1 (ints)", nsPerCall((i) => closure(ints[i & 1023]!))],
  ["sandbox f(a,b)=a*b+1 (ints)", nsPerCall((i) => box.call(ints[i & 1023]!))],
  ["sandbox f(a,b)=a*b+1 (floats)", nsPerCall((i) => box.call(floats[i & 1023]!))],
  ["sandbox through SQL call path (invoke)", nsPerCall((i) => invoke(fd, ints[i & 1023]!, ctx))],
  ["sandbox s(x)=x.toUpperCase() (string)", nsPerCall((i) => strBox.call(strs[i & 1023]!))],
  ["sandbox o(r)=r.a*r.b+1 (object arg, JSON)", nsPerCall((i) => objBox.call(rows[i & 1023]!))],
];
for (const [name, ns] of results) console.log(`${name.padEnd(44)} ${ns.toFixed(0).padStart(7)} ns/call`);
