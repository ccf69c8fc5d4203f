/**
 * The bytecode order of the compiled executable (Makefile: dist/floe; memory). Runs a
 * first build the ways it starts most — `floe run` over the demo, `--version`, `floe serve` up to
 * its first served request, `floe check` — with BUN_BYTECODE_ORDER_OUT set, one order file per run
 * in DIR. The second build (`bun build --bytecode-order=FILE …`, most important first) lays out the
 * bytecode those runs use first and together, so a start touches fewer pages of the executable
 * (pipe mode's file-backed pages: about 3 MiB fewer; bench/startup.ts measures it).
 * The orders name functions by a hash of their code, the same in every build of the same sources, so the
 * x64 run's orders serve the arm64 build too (its effect there is not measured).
 *
 *   node_modules/.bin/bun packaging/bytecode-order.ts BIN DIR   → prints the --bytecode-order flags
 */
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

const ROOT = join(import.meta.dir, "..");
const [binArg, dirArg] = process.argv.slice(2);
if (!binArg || !dirArg) throw new Error("usage: bytecode-order.ts BIN DIR");
const bin = resolve(binArg);
const dir = resolve(dirArg);
mkdirSync(dir, { recursive: true });

const files: string[] = [];
const orderFile = (name: string) => {
  const f = join(dir, `${name}.order`);
  rmSync(f, { force: true });
  files.push(f);
  return f;
};

async function run(name: string, args: string[]): Promise<void> {
  const p = Bun.spawn([bin, ...args], { cwd: ROOT, env: { ...process.env, BUN_BYTECODE_ORDER_OUT: orderFile(name) }, stdout: "ignore", stderr: "pipe" });
  const code = await p.exited;
  if (code !== 0) throw new Error(`${bin} ${args.join(" ")} exited ${code}: ${await new Response(p.stderr).text()}`);
}

/** The daemon with empty etc/ and data/, from its start to an answered GET /rules, then SIGTERM. */
async function serve(): Promise<void> {
  const home = mkdtempSync(join(tmpdir(), "floe-order-"));
  mkdirSync(join(home, "etc"));
  mkdirSync(join(home, "data"));
  const p = Bun.spawn([bin, "serve", "--etc", join(home, "etc"), "--data", join(home, "data")], {
    cwd: home,
    env: { ...process.env, BUN_BYTECODE_ORDER_OUT: orderFile("serve"), KUIPER__BASIC__RESTPORT: "0", KUIPER__BASIC__PORT: "0", KUIPER__SOURCE__HTTPSERVERPORT: "0" },
    stdout: "pipe",
    stderr: "ignore",
  });
  try {
    const reader = p.stdout.getReader();
    let out = "";
    let m: RegExpExecArray | null = null;
    const deadline = Date.now() + 30_000;
    while (!(m = /restful api on https?:\/\/[^:]+:(\d+)\./.exec(out))) {
      const { value, done } = await reader.read();
      if (done || Date.now() > deadline) throw new Error(`${bin} serve did not start: ${out}`);
      out += new TextDecoder().decode(value);
    }
    reader.releaseLock();
    const res = await fetch(`http://127.0.0.1:${m[1]}/rules`);
    if (res.status !== 200) throw new Error(`${bin} serve: GET /rules answered ${res.status}`);
  } finally {
    p.kill("SIGTERM");
    await p.exited;
    rmSync(home, { recursive: true, force: true });
  }
}

await run("run", ["run", "rules/demo.sql", "--input", "fixtures/demo.jsonl"]);
await run("version", ["--version"]);
await serve();
await run("check", ["check", "rules/demo.sql"]);
for (const f of files) if (!(await Bun.file(f).exists())) throw new Error(`${bin} wrote no bytecode order to ${f}`);
console.log(files.map((f) => `--bytecode-order=${f}`).join(" "));
