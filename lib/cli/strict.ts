/**
 * Strict reading of a command line against a citty `args` definition, before citty parses it:
 * an unknown flag, a bad enum value, a flag without its value or a missing argument is a usage
 * error (exit 2) with one line that says what to type instead.
 */
import type { ArgDef, ArgsDef } from "citty";
import { UsageError } from "./options.ts";
import { didYouMean } from "../plan/suggest.ts";

function aliases(d: ArgDef): string[] {
  const a = (d as { alias?: string | string[] }).alias;
  return a === undefined ? [] : Array.isArray(a) ? a : [a];
}

const dash = (n: string) => (n.length === 1 ? `-${n}` : `--${n}`);

/** Throws a UsageError naming the first problem of `argv` for command `cmd` (`floe run`). */
export function checkArgs(cmd: string, def: ArgsDef, argv: string[]): void {
  const byName = new Map<string, { name: string; d: ArgDef; negated: boolean }>();
  const positionals: { name: string; required: boolean }[] = [];
  for (const [name, d] of Object.entries(def)) {
    if (d.type === "positional") {
      positionals.push({ name, required: d.required !== false });
      continue;
    }
    for (const n of [name, ...aliases(d)]) byName.set(n, { name, d, negated: false });
    if (d.type === "boolean") byName.set(`no-${name}`, { name, d, negated: true });
  }
  const flagNames = [...byName.keys()].map(dash);
  let given = 0;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === "--") {
      given += argv.length - i - 1;
      break;
    }
    if (!a.startsWith("-") || a === "-") {
      given++;
      continue;
    }
    const m = /^--?([^=]*)(?:=(.*))?$/s.exec(a)!;
    let name = m[1]!;
    let value = m[2];
    // `-oKEY=VALUE`: a one-letter alias glued to its value.
    if (!a.startsWith("--") && name.length > 1 && value === undefined && byName.get(name[0]!)?.d.type === "string") {
      value = name.slice(1);
      name = name[0]!;
    }
    const f = byName.get(name);
    if (!f) throw new UsageError(`unknown flag ${a.replace(/=.*$/s, "")} for ${cmd}${didYouMean(dash(name), flagNames) || ` (${cmd} --help lists them)`}`);
    if (f.d.type === "boolean") {
      if (value !== undefined && !["true", "false"].includes(value)) throw new UsageError(`${dash(name)} takes no value (got ${JSON.stringify(value)})`);
      continue;
    }
    if (value === undefined) {
      value = argv[++i];
      if (value === undefined) throw new UsageError(`${dash(name)} needs a value${hint(f.d)}`);
    }
    const options = (f.d as { options?: string[] }).options;
    if (f.d.type === "enum" && options && !options.includes(value))
      throw new UsageError(`${dash(name)} must be one of ${options.join(", ")} (got ${JSON.stringify(value)})${didYouMean(value, options)}`);
  }
  const missing = positionals.filter((p) => p.required)[given];
  if (given < positionals.filter((p) => p.required).length && missing)
    throw new UsageError(`missing ${missing.name.toUpperCase()} for ${cmd} (${cmd} --help shows examples)`);
}

function hint(d: ArgDef): string {
  const h = (d as { valueHint?: string }).valueHint;
  return h ? ` ${h}` : "";
}
