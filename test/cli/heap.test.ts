/**
 * floe picks JSC's small heap itself (cli.ts): `floe serve` started without BUN_JSC_forceRAMSize
 * runs, in the same process (execve), with it set to 64 MiB; FLOE_JSC_RAM chooses another size or,
 * set to `system`, keeps the runtime's own sizing.
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

async function heapOf(env: Record<string, string>): Promise<string | undefined> {
  const saved = process.env.BUN_JSC_forceRAMSize;
  delete process.env.BUN_JSC_forceRAMSize;
  try {
    const d = await startFloe(tempHome(), env);
    try {
      // The process that answers is the one spawned: the variable came in through execve.
      expect((await d.call("GET", "/ping")).status).toBe(200);
      return environ(d.proc.pid).BUN_JSC_forceRAMSize;
    } finally {
      await d.stop();
    }
  } finally {
    if (saved !== undefined) process.env.BUN_JSC_forceRAMSize = saved;
  }
}

test("floe serve started as a user starts it runs with JSC's 64 MiB heap sizing", async () => {
  expect(await heapOf({})).toBe("67108864");
}, 30_000);

test("FLOE_JSC_RAM picks another size, or `system` keeps the runtime's own", async () => {
  expect(await heapOf({ FLOE_JSC_RAM: "33554432" })).toBe("33554432");
  expect(await heapOf({ FLOE_JSC_RAM: "system" })).toBeUndefined();
}, 30_000);
