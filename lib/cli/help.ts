/**
 * Help text from the commands' citty definitions: a one-line summary, usage, the description's
 * examples and notes, then the options in two columns. Plain text unless standard output is a
 * terminal and NO_COLOR is unset (https://no-color.org); never wider than its longest line.
 */
import type { ArgDef, ArgsDef, CommandDef } from "citty";

export interface Style {
  readonly bold: (s: string) => string;
  readonly cyan: (s: string) => string;
}

const PLAIN: Style = { bold: (s) => s, cyan: (s) => s };
const ANSI: Style = { bold: (s) => `\x1b[1m${s}\x1b[22m`, cyan: (s) => `\x1b[36m${s}\x1b[39m` };

/** Colour only on a terminal, never with NO_COLOR (any value) or TERM=dumb; FORCE_COLOR forces it. */
export function useColor(isTty: boolean, env: Record<string, string | undefined> = process.env): boolean {
  if (env.NO_COLOR !== undefined) return false;
  if (env.FORCE_COLOR !== undefined && env.FORCE_COLOR !== "0") return true;
  return isTty && env.TERM !== "dumb";
}

export function style(color: boolean): Style {
  return color ? ANSI : PLAIN;
}

function aliasList(d: ArgDef): string[] {
  const a = (d as { alias?: string | string[] }).alias;
  return a === undefined ? [] : Array.isArray(a) ? a : [a];
}

function flagLabel(name: string, d: ArgDef): string {
  const names = [...aliasList(d).map((a) => (a.length === 1 ? `-${a}` : `--${a}`)), `--${name}`].join(", ");
  if (d.type === "boolean") return names;
  const options = (d as { options?: string[] }).options;
  const hint = d.type === "enum" && options ? options.join("|") : ((d as { valueHint?: string }).valueHint ?? "VALUE");
  return `${names} ${hint}`;
}

/** Two columns: labels padded to the longest (at most 30; a longer label gets its own line). */
function columns(rows: [string, string][], s: Style): string {
  const width = Math.min(30, Math.max(0, ...rows.map(([l]) => l.length)));
  return rows
    .map(([l, r]) => (l.length > width ? `  ${s.cyan(l)}\n  ${" ".repeat(width)}  ${r}` : `  ${s.cyan(l)}${" ".repeat(width - l.length)}  ${r}`).trimEnd())
    .join("\n");
}

/** `floe run --help`. */
export function commandHelp(prog: string, cmd: CommandDef, s: Style = PLAIN): string {
  const meta = (cmd.meta ?? {}) as { name?: string; description?: string };
  const [summary = "", ...rest] = (meta.description ?? "").split("\n");
  const args = (cmd.args ?? {}) as ArgsDef;
  const positionals = Object.entries(args).filter(([, d]) => d.type === "positional");
  const flags = Object.entries(args).filter(([, d]) => d.type !== "positional");
  const usage = [`${prog} ${meta.name ?? ""}`, flags.length ? "[options]" : "", cmd.args ? "" : "…", ...positionals.map(([n, d]) => (d.required === false ? `[${n.toUpperCase()}...]` : `<${n.toUpperCase()}>`))]
    .filter(Boolean)
    .join(" ");
  let out = `${s.bold(`${prog} ${meta.name}`)} — ${summary}\n\n${s.bold("Usage:")} ${usage}\n`;
  const body = rest.join("\n").replace(/^\n+|\n+$/g, "");
  if (body) out += `\n${body}\n`;
  if (positionals.length) out += `\n${s.bold("Arguments:")}\n${columns(positionals.map(([n, d]) => [n.toUpperCase(), d.description ?? ""]), s)}\n`;
  const rows: [string, string][] = [];
  for (const [n, d] of flags) {
    const def = (d as { default?: unknown }).default;
    rows.push([flagLabel(n, d), `${d.description ?? ""}${def !== undefined && d.type !== "boolean" ? ` (default: ${def})` : ""}`]);
    const neg = (d as { negativeDescription?: string }).negativeDescription;
    if (d.type === "boolean" && neg) rows.push([`--no-${n}`, neg]);
  }
  rows.push(["-h, --help", "show this help"]);
  out += `\n${s.bold("Options:")}\n${columns(rows, s)}\n`;
  return out;
}

export interface CommandGroup {
  readonly title: string;
  readonly commands: [name: string, summary: string][];
}

/** `floe --help`: the commands in groups, one line each, then examples. */
export function topHelp(prog: string, version: string, summary: string, groups: CommandGroup[], examples: string[], s: Style = PLAIN): string {
  let out = `${s.bold(prog)} ${version} — ${summary}\n\n${s.bold("Usage:")} ${prog} <command> [options]\n`;
  for (const g of groups) out += `\n${s.bold(g.title)}\n${columns(g.commands, s)}\n`;
  out += `\n${s.bold("Examples:")}\n${examples.map((e) => `  ${e}`).join("\n")}\n`;
  out += `\n${prog} <command> --help shows a command's options and examples; ${prog} --version prints the version.\n`;
  return out;
}
