/** `floe check RULE`: parse and plan a rule, print the first error with its position (for CI lint). */
import { defineCommand } from "citty";
import { EngineError, errorText, ParseError } from "../errors.ts";
import { UTC } from "../value/time.ts";
import { planRuleDef } from "../plan/plan-rule-def.ts";
import { parseRuleOptions } from "../plan/rule-options.ts";
import { createCatalog } from "../functions/index.ts";
import { streamDef, type StreamDef } from "../plan/streams.ts";
import { parseRuleFile } from "../sql/parse.ts";

export default defineCommand({
  meta: {
    name: "check",
    description:
      "Check a rule file without running it: parse, then plan against its CREATE statements.\n\n" +
      "  floe check rules/demo.sql\n  floe check --parse-only rules/*.sql\n\n" +
      "Prints `<file>: ok` or `<file>:<line>:<column>: <eKuiper message>`; exit 0 when all are ok, 1 otherwise.",
  },
  args: {
    rule: { type: "positional", required: true, description: "rule file(s) (.sql)" },
    "parse-only": { type: "boolean", description: "check syntax only (no planning)" },
  },
  async run({ args }) {
    const files = args._.length ? args._ : [args.rule];
    let bad = 0;
    const functions = createCatalog();
    for (const f of files) {
      try {
        const file = parseRuleFile(await Bun.file(f).text(), functions);
        if (!args["parse-only"]) {
          const defs = new Map<string, StreamDef>(file.creates.map((c) => [c.name, streamDef(c)]));
          if (file.creates.length === 0)
            for (const n of [file.select.from.name, ...file.select.joins.map((j) => j.source.name)])
              defs.set(n, { name: n, kind: "stream", fields: null, options: {}, statement: "" });
          planRuleDef({ id: "check", select: file.select, options: parseRuleOptions("check", undefined) }, defs, { functions, zone: UTC, env: { now: () => 0, zone: UTC, ruleId: "check", ruleStart: 0 } });
        }
        process.stdout.write(`${f}: ok\n`);
      } catch (e) {
        if (!(e instanceof EngineError)) throw e;
        bad++;
        const pos = e instanceof ParseError ? `${e.line}:${e.column}:` : "";
        process.stdout.write(`${f}:${pos} ${errorText(e)}\n`);
      }
    }
    return bad ? 1 : 0;
  },
});
