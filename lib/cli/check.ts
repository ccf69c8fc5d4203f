/** `floe check RULE...`: parse and plan rules without running them (for CI lint). */
import { defineCommand } from "citty";
import { extname } from "node:path";
import { EngineError, errorText, ParseError } from "../errors.ts";
import { UTC } from "../value/time.ts";
import { planRuleDef } from "../plan/plan-rule-def.ts";
import { parseRuleOptions } from "../plan/rule-options.ts";
import { createCatalog } from "../functions/index.ts";
import { streamDef, type StreamDef } from "../plan/streams.ts";
import { parseCreates, parseRuleFile } from "../sql/parse.ts";
import { readStreamsFile } from "./options.ts";
import { explain } from "./where.ts";

/** The SQL of a rule file: a .sql file as is, or the `sql` of an eKuiper rule .json (graph rules have none). */
function ruleSql(path: string, text: string): { sql?: string; note?: string; error?: string } {
  if (extname(path).toLowerCase() !== ".json") return { sql: text };
  let rule: unknown;
  try {
    rule = JSON.parse(text);
  } catch (e) {
    return { error: `not valid JSON: ${(e as Error).message}` };
  }
  if (rule === null || typeof rule !== "object" || Array.isArray(rule)) return { error: "a rule .json holds one JSON object" };
  const r = rule as Record<string, unknown>;
  if (typeof r.sql === "string") {
    if (r.actions !== undefined && !Array.isArray(r.actions)) return { error: '"actions" must be an array' };
    return { sql: r.sql };
  }
  if (r.graph && typeof r.graph === "object") return { note: "graph rule: JSON checked, nodes not planned" };
  return { error: 'the rule has no "sql" string (nor a "graph")' };
}

export default defineCommand({
  meta: {
    name: "check",
    description:
      "Check rule files without running them: parse, then plan against their CREATE statements\n\n" +
      "Examples:\n" +
      "  floe check rules/*.sql\n" +
      "  floe check --streams streams.sql rule.json   # an eKuiper rule .json, its streams from a .sql file\n" +
      "  floe check --parse-only rules/demo.sql\n\n" +
      "Prints `<file>: ok`, or `<file>:<line>:<column>: <eKuiper message>` with the source line, a caret\n" +
      "and \"did you mean\" below. A rule with no CREATE reads schemaless streams. Exit 0 when all are ok,\n" +
      "1 otherwise.",
  },
  args: {
    rule: { type: "positional", required: true, description: "rule file(s): .sql, or eKuiper rule .json" },
    streams: { type: "string", description: "a .sql file of CREATE statements the rules read", valueHint: "FILE" },
    "parse-only": { type: "boolean", description: "check syntax only (no planning)" },
  },
  async run({ args }) {
    const files = args._.length ? args._.map(String) : [args.rule];
    const streamsSql = await readStreamsFile(args.streams);
    let bad = 0;
    const functions = createCatalog();
    for (const f of files) {
      const text = await Bun.file(f)
        .text()
        .catch(() => undefined);
      if (text === undefined) {
        bad++;
        process.stdout.write(`${f}: cannot read the file\n`);
        continue;
      }
      const { sql, note, error } = ruleSql(f, text);
      if (error || sql === undefined) {
        if (error) bad++;
        process.stdout.write(`${f}: ${error ?? `ok (${note})`}\n`);
        continue;
      }
      const shown = extname(f).toLowerCase() === ".json" ? `${f} (sql)` : f;
      try {
        const extra = streamsSql ? parseCreates(streamsSql, functions) : [];
        const file = parseRuleFile(sql, functions);
        if (!args["parse-only"]) {
          const all = [...extra, ...file.creates];
          const defs = new Map<string, StreamDef>(all.map((c) => [c.name, streamDef(c)]));
          if (all.length === 0)
            for (const n of [file.select.from.name, ...file.select.joins.map((j) => j.source.name)])
              defs.set(n, { name: n, kind: "stream", fields: null, options: {}, statement: "" });
          planRuleDef({ id: "check", select: file.select, options: parseRuleOptions("check", undefined) }, defs, { functions, zone: UTC, env: { now: () => 0, zone: UTC, ruleId: "check", ruleStart: 0 } });
        }
        process.stdout.write(`${f}: ok\n`);
      } catch (e) {
        if (!(e instanceof EngineError)) throw e;
        bad++;
        const pos = e instanceof ParseError ? `${e.line}:${e.column}:` : "";
        process.stdout.write(`${shown}:${pos} ${errorText(e)}\n${explain(e, { file: shown, sql, streamsFile: args.streams, streamsSql })}`);
      }
    }
    return bad ? 1 : 0;
  },
});
