/**
 * The arm64 executable (dist/floe-linux-arm64, what a Raspberry Pi runs) on this machine under qemu
 * user emulation (Debian's qemu-user-static with libc6-arm64-cross; test/provision.sh installs
 * them): the golden cases pass, and the bundled rules give the x64 executable's output byte for
 * byte. Without binfmt the kernel cannot start an arm64 executable again, so floe's restart with
 * the small heap (cli.ts) fails there: floe says so in one line and runs on the runtime's sizing.
 */
import { describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { join } from "node:path";

const ROOT = join(import.meta.dir, "../..");
const ARM = join(ROOT, "dist/floe-linux-arm64");
const X64 = join(ROOT, "dist/floe");
const QEMU = "/usr/bin/qemu-aarch64-static";
const LIBS = "/usr/aarch64-linux-gnu";

function run(cmd: string[], env: Record<string, string> = {}): { out: string; err: string; code: number } {
  const p = Bun.spawnSync(cmd, { cwd: ROOT, env: { ...process.env, ...env }, stdout: "pipe", stderr: "pipe" });
  return { out: p.stdout.toString(), err: p.stderr.toString(), code: p.exitCode ?? -1 };
}

const arm = (args: string[], env: Record<string, string> = { FLOE_JSC_RAM: "system" }) => run([QEMU, "-L", LIBS, ARM, ...args], env);

describe("the arm64 executable under qemu", () => {
  test("what it needs is here", () => {
    expect(existsSync(QEMU), "qemu-aarch64-static is missing (apt-get install qemu-user-static)").toBe(true);
    expect(existsSync(join(LIBS, "lib/ld-linux-aarch64.so.1")), "the arm64 C library is missing (apt-get install libc6-arm64-cross)").toBe(true);
    expect(existsSync(ARM), "dist/floe-linux-arm64 is missing: run `make build` first").toBe(true);
  });

  test("the golden cases pass", () => {
    const r = arm(["test", "--quiet", "fixtures/golden"]);
    expect(r.err).toBe("");
    expect(r.out).toMatch(/^\d+ passed, 0 failed\n$/);
    expect(r.code).toBe(0);
  }, 60_000);

  test.each([
    ["rules/demo.sql", "fixtures/demo.jsonl", []],
    ["rules/win.sql", "fixtures/events.jsonl", []],
  ])("%s over %s gives the x64 executable's output byte for byte", (rule, input, extra) => {
    const want = run([X64, "run", rule, "--input", input, ...extra]);
    expect(want.code).toBe(0);
    expect(want.out.length).toBeGreaterThan(0);
    const got = arm(["run", rule, "--input", input, ...extra]);
    expect(got.err).toBe(want.err);
    expect(got.out).toBe(want.out);
    expect(got.code).toBe(0);
  }, 60_000);

  test("with the small heap asked for: without binfmt the failed restart is one line on stderr, and the rule runs either way", () => {
    const want = run([X64, "run", "rules/demo.sql", "--input", "fixtures/demo.jsonl"]);
    const env: Record<string, string> = {};
    for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith("BUN_JSC_") && k !== "FLOE_JSC_RAM") env[k] = v;
    const p = Bun.spawnSync([QEMU, "-L", LIBS, ARM, "run", "rules/demo.sql", "--input", "fixtures/demo.jsonl"], { cwd: ROOT, env, stdout: "pipe", stderr: "pipe" });
    // Where binfmt_misc hands arm64 executables to qemu (a host with systemd-binfmt), the restart works.
    const binfmt = existsSync("/proc/sys/fs/binfmt_misc/qemu-aarch64");
    expect(p.stderr.toString()).toBe(binfmt ? "" : "floe: could not restart with the small heap (ENOEXEC): the runtime's own heap sizing is used (FLOE_JSC_RAM=system skips the restart)\n");
    expect(p.stdout.toString()).toBe(want.out);
    expect(p.exitCode).toBe(0);
  }, 60_000);
});
