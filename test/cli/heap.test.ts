/**
 * floe picks JSC's small heap itself (cli.ts): `floe serve` started without BUN_JSC_forceRAMSize
 * runs, in the same process (execve), with it set to 64 MiB and BUN_JSC_largeHeapGrowthFactor to
 * 1.75; FLOE_JSC_RAM chooses another size or, set to `system`, keeps the runtime's own sizing; a
 * BUN_JSC_ variable the user set is kept as it is.
 */
import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { startFloe, tempHome } from "../server/daemon.ts";

function environ(pid: number): Record<string, string> {
  const out: Record<string, string> = {};
  for (const kv of readFileSync(`/proc/${pid}/environ`, "utf8").split("\0")) {
    const i = kv.indexOf("=");
    if (i > 0) out[kv.slice(0, i)] = kv.slice(i + 1);
  }
  return out;
}

const HEAP_VARS = ["BUN_JSC_forceRAMSize", "BUN_JSC_largeHeapGrowthFactor"] as const;

/** The heap variables of the serving process, started with `env` over this one's minus those variables. */
async function heapOf(env: Record<string, string>): Promise<(string | undefined)[]> {
  const saved = HEAP_VARS.map((k) => process.env[k]);
  for (const k of HEAP_VARS) delete process.env[k];
  try {
    const d = await startFloe(tempHome(), env);
    try {
      // The process that answers is the one spawned: the variable came in through execve.
      expect((await d.call("GET", "/ping")).status).toBe(200);
      const e = environ(d.proc.pid);
      return HEAP_VARS.map((k) => e[k]);
    } finally {
      await d.stop();
    }
  } finally {
    HEAP_VARS.forEach((k, i) => {
      if (saved[i] !== undefined) process.env[k] = saved[i];
    });
  }
}

test("floe serve started as a user starts it runs with JSC's 64 MiB heap sizing and growth factor 1.75", async () => {
  expect(await heapOf({})).toEqual(["67108864", "1.75"]);
}, 30_000);

test("FLOE_JSC_RAM picks another size, or `system` keeps the runtime's own", async () => {
  expect(await heapOf({ FLOE_JSC_RAM: "33554432" })).toEqual(["33554432", "1.75"]);
  expect(await heapOf({ FLOE_JSC_RAM: "system" })).toEqual([undefined, undefined]);
}, 30_000);

test("a JSC heap variable already set is kept, and the missing one is added", async () => {
  expect(await heapOf({ BUN_JSC_largeHeapGrowthFactor: "2" })).toEqual(["67108864", "2"]);
  expect(await heapOf({ BUN_JSC_forceRAMSize: "100663296" })).toEqual(["100663296", "1.75"]);
  expect(await heapOf({ BUN_JSC_forceRAMSize: "100663296", BUN_JSC_largeHeapGrowthFactor: "1.5" })).toEqual(["100663296", "1.5"]);
}, 30_000);
