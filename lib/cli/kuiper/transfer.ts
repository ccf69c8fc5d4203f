/** Import/export verbs (config-and-cli.md §8.4); files are read and written on the CLI's side. */
import { readFileSync, writeFileSync } from "node:fs";
import { errorMessage, indentJson, ok, type Client } from "./client.ts";

function flag(args: string[], name: string): string | undefined {
  const i = args.findIndex((a) => a === `-${name}` || a === `--${name}`);
  return i >= 0 ? args[i + 1] : undefined;
}

function positional(args: string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    if (/^--?\w/.test(args[i]!)) i++;
    else out.push(args[i]!);
  }
  return out;
}

export async function importCommand(c: Client, what: string, args: string[]): Promise<void> {
  const file = flag(args, "f");
  if (what === "ruleset") {
    if (!file) {
      c.usage("Required ruleset json file to import");
      return;
    }
    let content: string;
    try {
      content = readFileSync(file, "utf8");
    } catch (e) {
      c.fail(`fail to read file ${file}: ${(e as Error).message}\n`);
      return;
    }
    const r = await c.call("POST", "/ruleset/import", { content });
    if (ok(r)) c.print(r.text + "\n");
    else c.fail(errorMessage(r) + "\n");
    return;
  }
  if (what === "data") {
    const s = flag(args, "s");
    const p = flag(args, "p");
    if (s !== "true" && s !== "false") {
      c.usage("Expect s flag to be a boolean value.\n");
      return;
    }
    if (p !== "true" && p !== "false") {
      c.usage("Expect p flag to be a boolean value.\n");
      return;
    }
    if (!file) {
      c.usage("Required configuration json file to import");
      return;
    }
    let content: string;
    try {
      content = readFileSync(file, "utf8");
    } catch (e) {
      c.fail(`fail to read file ${file}: ${(e as Error).message}\n`);
      return;
    }
    const r = await c.call("POST", `/data/import?partial=${p === "true" ? 1 : 0}&stop=${s === "true" ? 1 : 0}`, { content });
    if (ok(r)) c.print(indentJson(r.text) + "\n");
    else c.fail(errorMessage(r) + "\n");
  }
}

export async function exportCommand(c: Client, what: string, args: string[]): Promise<void> {
  const [file] = positional(args);
  if (what === "ruleset") {
    if (!file) {
      c.usage("Require exported file name.\n");
      return;
    }
    const r = await c.call("POST", "/ruleset/export");
    if (!ok(r)) {
      c.fail(errorMessage(r) + "\n");
      return;
    }
    writeFileSync(file, r.text);
    const v = JSON.parse(r.text) as Record<string, Record<string, string>>;
    c.print(`exported ${Object.keys(v.streams ?? {}).length} streams, ${Object.keys(v.tables ?? {}).length} tables and ${Object.keys(v.rules ?? {}).length} rules\n`);
    return;
  }
  if (what === "data") {
    if (!file) {
      c.usage("Expect configuration file.\n");
      return;
    }
    const rules = flag(args, "r");
    let r;
    if (rules !== undefined) {
      let ids: unknown;
      try {
        ids = JSON.parse(rules);
      } catch (e) {
        c.usage(`rules ${rules} unmarshal error ${(e as Error).message}\n`);
        return;
      }
      r = await c.call("POST", "/data/export", ids);
    } else r = await c.call("GET", "/data/export");
    if (!ok(r)) {
      c.fail(errorMessage(r) + "\n");
      return;
    }
    writeFileSync(file, r.text);
    c.print("export configuration success\n");
  }
}

export async function importStatus(c: Client): Promise<void> {
  const r = await c.call("GET", "/data/import/status");
  c.print(indentJson(r.text) + "\n");
}
