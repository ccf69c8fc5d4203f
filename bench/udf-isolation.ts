/**
 * What a WebAssembly instance per JavaScript UDF costs: resident memory and creation time per UDF
 * (each created and called once) with an instance of its own (what floe does, js-sandbox.ts),
 * against N sandboxes (QuickJS runtimes) sharing one instance (what floe did before a fault in one UDF could
 * be kept from the others); and how long a fault takes to recover from (the faulting UDF's next call).
 *
 *   node_modules/.bin/bun bench/udf-isolation.ts [own|shared] [N]
 *
 * Run each mode in its own process (RSS is process-wide).
 */
import { createSandbox, DEFAULT_SANDBOX_LIMITS, loadSandbox, Sandbox } from "../lib/functions/js-sandbox.ts";
import { newInstance } from "../lib/functions/quickjs-module.ts";

const mode = process.argv[2] === "shared" ? "shared" : "own";
const N = Number(process.argv[3] ?? 100);
const SCRIPT = "var calls = 0; function f(x) { calls++; return x * 2 + calls; }";

await loadSandbox();
Bun.gc(true);
const rss0 = process.memoryUsage().rss;
const t0 = performance.now();
const keep: unknown[] = [];
if (mode === "own") {
  for (let i = 0; i < N; i++) {
    const b = await createSandbox("f", SCRIPT);
    b.call([20n]);
    keep.push(b);
  }
} else {
  const mod = await newInstance();
  for (let i = 0; i < N; i++) {
    const b = new Sandbox("f", SCRIPT, DEFAULT_SANDBOX_LIMITS, mod);
    b.call([20n]);
    keep.push(b);
  }
}
const ms = (performance.now() - t0) / N;
Bun.gc(true);
const kib = (process.memoryUsage().rss - rss0) / N / 1024;
console.log(`${mode.padEnd(6)} N=${N}: ${kib.toFixed(0)} KiB RSS and ${ms.toFixed(2)} ms to create per UDF`);

if (mode === "own") {
  const deep = await createSandbox("deep", 'function deep(n) { return eval("(".repeat(n) + "1" + ")".repeat(n)); }');
  await loadSandbox(); // the spare is ready, as it is between two faults
  const rounds: number[] = [];
  for (let i = 0; i < 10; i++) {
    try {
      deep.call([300_000n]);
    } catch {
      // the fault itself
    }
    const t = performance.now();
    deep.call([10n]);
    rounds.push(performance.now() - t);
    await loadSandbox();
  }
  rounds.sort((a, b) => a - b);
  console.log(`after a fault (${deep.faults} faults): the faulting UDF's next call took ${rounds[5]!.toFixed(2)} ms (median of 10; its runtime is rebuilt in the spare instance)`);
}
