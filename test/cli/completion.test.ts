/** The bash completion, run by bash: commands, the words after a verb, flag values and option keys. */
import { expect, test } from "bun:test";
import { join } from "node:path";

const ROOT = join(import.meta.dir, "../..");
const script = Bun.spawnSync([process.execPath, join(ROOT, "cli.ts"), "completion", "bash"]).stdout.toString();

/** What bash offers for the command line `words` (the last one being completed). */
function complete(...words: string[]): string[] {
  const line = words.map((w) => `'${w}'`).join(" ");
  const p = Bun.spawnSync(["bash", "-c", `${script}\nCOMP_WORDS=(${line}); COMP_CWORD=${words.length - 1}; _floe; printf '%s\\n' "\${COMPREPLY[@]}"`], { cwd: ROOT });
  expect(p.stderr.toString()).toBe("");
  return p.stdout.toString().split("\n").filter(Boolean);
}

test("commands, then the words after a verb", () => {
  expect(complete("floe", "sh")).toEqual(["show"]);
  expect(complete("floe", "show", "")).toEqual(["streams", "tables", "rules", "plugins", "udfs", "services", "service_funcs", "schemas", "scripts"]);
  expect(complete("floe", "create", "st")).toEqual(["stream"]);
  expect(complete("floe", "completion", "")).toEqual(["bash", "zsh", "fish"]);
  expect(complete("floe", "help", "ser")).toEqual(["serve"]);
});

test("flags, and the values of enum flags, -o keys and serve's flags", () => {
  expect(complete("floe", "run", "--em")).toEqual(["--emit"]);
  expect(complete("floe", "run", "x.sql", "-")).toContain("-C");
  expect(complete("floe", "run", "x.sql", "--emit", "")).toEqual(["rows", "array"]);
  expect(complete("floe", "run", "x.sql", "-o", "sendE")).toEqual(["sendError="]);
  expect(complete("floe", "test", "--reporter", "")).toEqual(["text", "tap", "junit"]);
  expect(complete("floe", "serve", "--log-level", "d")).toEqual(["debug"]);
});

test("zsh and fish scripts carry the same words", () => {
  for (const sh of ["zsh", "fish"]) {
    const s = Bun.spawnSync([process.execPath, join(ROOT, "cli.ts"), "completion", sh]).stdout.toString();
    expect(s).toContain("streams tables rules");
    expect(s).toContain("rows array");
    expect(s).toContain("sendError=");
  }
});
