/**
 * The Debian package (packaging/deb/build.sh, `make deb`): built from dist/floe, unpacked into a
 * scratch root with `dpkg-deb -x`, and the installed executable run from there. The build uses
 * gzip -1 rather than make deb's xz so that it takes seconds; the contents are the same.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, lstatSync, mkdtempSync, readFileSync, readlinkSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pkg from "../../package.json" with { type: "json" };

const ROOT = join(import.meta.dir, "../..");
const BIN = join(ROOT, "dist/floe");

function which(cmd: string): string | undefined {
  const p = Bun.spawnSync(["sh", "-c", `command -v ${cmd}`]);
  return p.exitCode === 0 ? p.stdout.toString().trim() : undefined;
}

function run(cmd: string[], env: Record<string, string> = {}) {
  const p = Bun.spawnSync(cmd, { cwd: ROOT, env: { ...(process.env as Record<string, string>), ...env } });
  return { code: p.exitCode, out: p.stdout.toString(), err: p.stderr.toString() };
}

let work = "";
let deb = "";
let root = "";
let control = "";

beforeAll(() => {
  expect(which("dpkg-deb"), "dpkg-deb is needed to build and unpack the package (apt-get install dpkg)").toBeDefined();
  expect(existsSync(BIN), "dist/floe is missing: run `make build` first").toBe(true);
  work = mkdtempSync(join(tmpdir(), "floe-deb-"));
  let man = join(ROOT, "dist/floe.1");
  if (!existsSync(man)) {
    man = join(work, "floe.1");
    const g = run([process.execPath, "packaging/gen-man.ts"]);
    expect(g.code, g.err).toBe(0);
    writeFileSync(man, g.out);
  }
  const b = run(["sh", "packaging/deb/build.sh", "amd64", BIN, man, work], { DEB_COMPRESSION: "gzip", DEB_LEVEL: "1" });
  expect(b.code, b.err).toBe(0);
  deb = b.out.trim();
  root = join(work, "root");
  control = join(work, "control");
  for (const args of [["-x", deb, root], ["-e", deb, control]]) {
    const p = run(["dpkg-deb", ...args]);
    expect(p.code, p.err).toBe(0);
  }
}, 120_000);

afterAll(() => {
  if (work) rmSync(work, { recursive: true, force: true });
});

describe("the Debian package", () => {
  test("is named floe_<version>_amd64.deb and declares its version and architecture", () => {
    expect(deb).toBe(join(work, `floe_${pkg.version}_amd64.deb`));
    const f = run(["dpkg-deb", "-f", deb, "Package", "Version", "Architecture"]);
    expect(f.out).toBe(`Package: floe\nVersion: ${pkg.version}\nArchitecture: amd64\n`);
  });

  test("installs the executable, kuiper, the unit, man page, completions, examples and /etc/floe as a conffile", () => {
    for (const f of [
      "usr/bin/floe",
      "lib/systemd/system/floe.service",
      "usr/share/man/man1/floe.1.gz",
      "usr/share/bash-completion/completions/floe",
      "usr/share/zsh/vendor-completions/_floe",
      "usr/share/fish/vendor_completions.d/floe.fish",
      "usr/share/doc/floe/copyright",
      "usr/share/doc/floe/changelog.gz",
      "usr/share/doc/floe/examples/demo.sql",
      "etc/floe/kuiper.yaml",
    ])
      expect(existsSync(join(root, f)), f).toBe(true);
    expect(readlinkSync(join(root, "usr/bin/kuiper"))).toBe("floe");
    expect(lstatSync(join(root, "usr/bin/floe")).mode & 0o777).toBe(0o755);
    expect(readFileSync(join(control, "conffiles"), "utf8")).toBe("/etc/floe/kuiper.yaml\n");
    expect(readFileSync(join(root, "usr/share/bash-completion/completions/floe"), "utf8")).toContain("complete ");
  });

  test("the installed floe prints its version and runs the demo rule with the packaged /etc/floe", () => {
    const floe = join(root, "usr/bin/floe");
    const v = run([floe, "--version"]);
    expect(v.err).toBe("");
    expect(v.out.trim()).toBe(`floe ${pkg.version}`);
    const ex = join(root, "usr/share/doc/floe/examples");
    const r = run([floe, "run", join(ex, "demo.sql"), "--input", join(ex, "demo.jsonl"), "--etc", join(root, "etc/floe")]);
    expect(r.code, r.err).toBe(0);
    expect(r.out).toBe(
      '{"device":"dev_2","humidity":38,"temp_f":81.1,"ts":1700000000100}\n' +
        '{"device":"dev_1","humidity":41.1,"temp_f":78.8,"ts":1700000000200}\n' +
        '{"device":"dev_2","humidity":37.4,"temp_f":86.9,"ts":1700000000400}\n',
    );
  });

  test("the unit runs /usr/bin/floe as the floe system user, hardened as make install's (systemd-analyze ≤ 3.0)", () => {
    const unit = join(root, "lib/systemd/system/floe.service");
    const text = readFileSync(unit, "utf8");
    expect(text).toContain("ExecStart=/usr/bin/floe serve -etc /etc/floe -data /var/lib/floe -log /var/log/floe\n");
    expect(text).toContain("\nUser=floe\nGroup=floe\n");
    expect(text).not.toContain("DynamicUser=");
    const sa = which("systemd-analyze");
    expect(sa, "systemd-analyze is needed (apt-get install systemd)").toBeDefined();
    const p = run([sa!, "security", "--offline=true", unit]);
    const m = /Overall exposure level for floe\.service: ([\d.]+)/.exec(p.out);
    expect(m, p.out + p.err).not.toBeNull();
    expect(Number(m![1])).toBeLessThanOrEqual(3.0);
  });

  test("the maintainer scripts are valid sh, create the floe user and enable or start nothing", () => {
    for (const s of ["postinst", "prerm", "postrm"]) {
      const file = join(control, s);
      expect(lstatSync(file).mode & 0o777, s).toBe(0o755);
      const n = run(["sh", "-n", file]);
      expect(n.code, `${s}: ${n.err}`).toBe(0);
      const code = readFileSync(file, "utf8").split("\n").filter((l) => !/^\s*#/.test(l)).join("\n");
      // try-restart acts only on a service already running; stop only on removal.
      expect(code, s).not.toMatch(/systemctl[^\n]*\b(enable|start|restart|unmask)\b|deb-systemd-invoke\s+(start|restart)\b|deb-systemd-helper\s+(enable|unmask)\b/);
    }
    expect(readFileSync(join(control, "postinst"), "utf8")).toMatch(/adduser --system --group [^\n]*floe\n/);
  });

  test("lintian reports no error, warning or info on it (overrides in packaging/deb/lintian-overrides)", () => {
    const lintian = which("lintian");
    expect(lintian, "lintian is needed (apt-get install lintian; make test's provisioning installs it)").toBeDefined();
    const p = run([lintian!, "--info", "--pedantic", deb]);
    const tags = p.out.split("\n").filter((l) => /^[EWIPX]: /.test(l));
    expect(tags).toEqual([]);
    expect(p.code, p.err).toBe(0);
  }, 120_000);
});
