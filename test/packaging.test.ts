/** The systemd unit, `make install` into a DESTDIR, the man page and the README's example commands. */
import { describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const ROOT = join(import.meta.dir, "..");
const UNIT = join(ROOT, "packaging/floe.service");

function which(cmd: string): string | undefined {
  const p = Bun.spawnSync(["sh", "-c", `command -v ${cmd}`]);
  return p.exitCode === 0 ? p.stdout.toString().trim() : undefined;
}

describe("the systemd unit", () => {
  test("systemd-analyze security rates it 3.0 or better (install systemd to run this)", () => {
    const sa = which("systemd-analyze");
    expect(sa, "systemd-analyze is needed (apt-get install systemd)").toBeDefined();
    const p = Bun.spawnSync([sa!, "security", "--offline=true", UNIT]);
    const m = /Overall exposure level for floe\.service: ([\d.]+)/.exec(p.stdout.toString());
    expect(m, p.stdout.toString() + p.stderr.toString()).not.toBeNull();
    expect(Number(m![1])).toBeLessThanOrEqual(3.0);
  });

  test("systemd-analyze verify accepts it once installed (ExecStart pointing at an executable)", () => {
    const sa = which("systemd-analyze")!;
    const dir = mkdtempSync(join(tmpdir(), "floe-unit-"));
    // As `make install` writes it, ExecStart under the install prefix; the man page is not installed here.
    const text = readFileSync(UNIT, "utf8").replace("/usr/local/bin/floe", process.execPath).replace(/^Documentation=.*\n/m, "");
    writeFileSync(join(dir, "floe.service"), text);
    const p = Bun.spawnSync([sa, "verify", join(dir, "floe.service")]);
    expect(p.stderr.toString()).toBe("");
    expect(p.exitCode).toBe(0);
  });

  test("the executable starts with the unit's environment (Bun exits on a JSC option it does not know)", () => {
    expect(existsSync(join(ROOT, "dist/floe")), "dist/floe is missing: run `make build` first").toBe(true);
    const env: Record<string, string> = { ...(process.env as Record<string, string>) };
    const lines = [...readFileSync(UNIT, "utf8").matchAll(/^Environment=(\w+)=(.*)$/gm)];
    expect(lines.map((m) => m[1])).toContain("BUN_JSC_forceRAMSize");
    for (const m of lines) env[m[1]!] = m[2]!;
    const v = Bun.spawnSync([join(ROOT, "dist/floe"), "--version"], { env });
    expect(v.stderr.toString()).toBe("");
    expect(v.stdout.toString()).toMatch(/^floe \d/);
  });
});

describe("make install", () => {
  test("installs the binary, kuiper link, unit under PREFIX, man page, completions and example config into DESTDIR", () => {
    expect(existsSync(join(ROOT, "dist/floe")), "dist/floe is missing: run `make build` first").toBe(true);
    const dest = mkdtempSync(join(tmpdir(), "floe-destdir-"));
    // dist/floe and dist/floe.1 are rebuilt only when older than the sources (a minute when they are).
    const p = Bun.spawnSync(["make", "-s", "install", `DESTDIR=${dest}`, "PREFIX=/opt/floe"], { cwd: ROOT });
    expect(p.stderr.toString()).toBe("");
    expect(p.exitCode).toBe(0);
    for (const f of ["bin/floe", "bin/kuiper", "lib/systemd/system/floe.service", "share/man/man1/floe.1", "share/floe/kuiper.yaml", "share/bash-completion/completions/floe", "share/zsh/site-functions/_floe", "share/fish/vendor_completions.d/floe.fish"])
      expect(existsSync(join(dest, "opt/floe", f)), f).toBe(true);
    expect(readFileSync(join(dest, "opt/floe/lib/systemd/system/floe.service"), "utf8")).toContain("ExecStart=/opt/floe/bin/floe serve ");
    expect(readFileSync(join(dest, "opt/floe/share/man/man1/floe.1"), "utf8")).toStartWith(".TH FLOE 1");
    const v = Bun.spawnSync([join(dest, "opt/floe/bin/floe"), "--version"]);
    expect(v.stdout.toString()).toMatch(/^floe \d/);
  }, 120_000);
});

describe("the README", () => {
  const readme = readFileSync(join(ROOT, "README.md"), "utf8");

  test("the files the pipe-mode examples name exist", () => {
    for (const f of ["rules/demo.sql", "fixtures/demo.jsonl", "rules/hot.sql", "fixtures/events.jsonl", "rules/win.sql", "fixtures/case.ndjson", "rules/mqtt-hot.sql", "packaging/floe.service"]) {
      expect(readme).toContain(f);
      expect(existsSync(join(ROOT, f)), f).toBe(true);
    }
  });

  test("every `floe run|check|test` example of the pipe-mode block runs and exits 0", () => {
    const block = /## Pipe mode\n\n```sh\n([\s\S]*?)```/.exec(readme)![1]!;
    const commands = block
      .split("\n")
      .map((l) => l.replace(/\s+#.*$/, "").trim())
      .filter((l) => l.startsWith("floe "));
    expect(commands.length).toBeGreaterThanOrEqual(5);
    for (const c of commands) {
      const p = Bun.spawnSync(["bash", "-c", `floe() { "${process.execPath}" "${ROOT}/cli.ts" "$@"; }; ${c}`], { cwd: ROOT });
      expect(p.exitCode, `${c}\n${p.stderr.toString()}`).toBe(0);
    }
  }, 180_000);

  test("the quick start's `make run` command, verbatim", () => {
    const p = Bun.spawnSync(["make", "-s", "run"], { cwd: ROOT });
    expect(p.exitCode, p.stderr.toString()).toBe(0);
    expect(p.stdout.toString()).toContain('"device":"dev_2"');
  }, 60_000);
});
