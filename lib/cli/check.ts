/** `floe check RULE...`: parse and plan rules without running them (for CI lint). */
import { defineCommand } from "citty";
import { extname } from "node:path";
import { EngineError, errorText, ParseError } from "../errors.ts";
import { UTC } from "../value/time.ts";
import { planRule } from "../plan/plan-rule.ts";
import { parseRuleOptions } from "../plan/rule-options.ts";
import { createFunctionRegistry } from "../functions/index.ts";
import { streamDef, type StreamDef } from "../plan/streams.ts";
import { parseCreates, parseRuleFile } from "../sql/parse.ts";
import { readStreamsFile, UsageError } from "./options.ts";
import { explain } from "./where.ts";
import { Client, type Reply } from "./kuiper/client.ts";

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

/**
 * The CREATE statements of the streams and tables a running daemon has, from eKuiper's
 * `POST /ruleset/export` (`{"streams": {name: "CREATE …"}, "tables": {…}}`): one request.
 */
async function serverStreams(server: string): Promise<string> {
  const base = server.replace(/\/+$/, "");
  if (!/^https?:\/\//.test(base)) throw new UsageError(`--server takes the REST API's URL, such as http://127.0.0.1:9081 (got ${JSON.stringify(server)})`);
  let res: Reply;
  try {
    res = await new Client(base, () => {}).call("POST", "/ruleset/export");
  } catch (e) {
    throw new Error(`cannot reach the server at ${base}: ${(e as Error).message}`, { cause: e });
  }
  const text = res.text;
  if (res.status < 200 || res.status > 299) throw new Error(`${base}/ruleset/export answered ${res.status}: ${text.trim()}`);
  const v = JSON.parse(text) as { streams?: Record<string, string>; tables?: Record<string, string> };
  return [...Object.values(v.streams ?? {}), ...Object.values(v.tables ?? {})].map((sql) => sql.replace(/;\s*$/, "") + ";\n").join("");
}

export default defineCommand({
  meta: {
    name: "check",
    description:
      "Check rule files without running them: parse, then plan against their CREATE statements\n\n" +
      "Examples:\n" +
      "  floe check rules/*.sql\n" +
      "  floe check --streams streams.sql rule.json   # an eKuiper rule .json, its streams from a .sql file\n" +
      "  floe check --parse-only rules/demo.sql\n" +
      "  floe check --server http://127.0.0.1:9081 rule.json   # against a running daemon's streams and tables\n\n" +
      "Prints `<file>: ok`, or `<file>:<line>:<column>: <eKuiper message>` with the source line, a caret\n" +
      "and \"did you mean\" below. A rule with no CREATE reads schemaless streams, unless --server names a\n" +
      "daemon: then the rules are planned against the streams and tables it has (their CREATE statements\n" +
      "come from its POST /ruleset/export), so a misspelt column is caught before POST /rules refuses it.\n" +
      "Exit 0 when all are ok, 1 otherwise.",
  },
  args: {
    rule: { type: "positional", required: true, description: "rule file(s): .sql, or eKuiper rule .json" },
    streams: { type: "string", description: "a .sql file of CREATE statements the rules read", valueHint: "FILE" },
    "parse-only": { type: "boolean", description: "check syntax only (no planning)" },
    server: { type: "string", description: "plan against the streams and tables of the floe serve (or eKuiper) at URL", valueHint: "URL" },
  },
  async run({ args }) {
    const files = args._.length ? args._.map(String) : [args.rule];
    const fromFile = await readStreamsFile(args.streams);
    const fromServer = args.server ? await serverStreams(args.server) : undefined;
    const streamsSql = fromFile !== undefined || fromServer !== undefined ? `${fromFile ?? ""}\n${fromServer ?? ""}` : undefined;
    const streamsFile = args.server ? (args.streams ? `${args.streams} and ${args.server}` : args.server) : args.streams;
    let bad = 0;
    const functions = createFunctionRegistry();
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
          planRule({ id: "check", select: file.select, options: parseRuleOptions("check", undefined) }, defs, { functions, zone: UTC, env: { now: () => 0, zone: UTC, ruleId: "check", ruleStart: 0 } });
        }
        process.stdout.write(`${f}: ok\n`);
      } catch (e) {
        if (!(e instanceof EngineError)) throw e;
        bad++;
        const pos = e instanceof ParseError ? `${e.line}:${e.column}:` : "";
        process.stdout.write(`${shown}:${pos} ${errorText(e)}\n${explain(e, { file: shown, sql, streamsFile, streamsSql })}`);
      }
    }
    return bad ? 1 : 0;
  },
});
