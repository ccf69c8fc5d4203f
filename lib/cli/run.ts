/** `floe run RULE`: one rule as a Unix filter (pipe-mode.md). */
import { defineCommand } from "citty";
import { existsSync } from "node:fs";
import { extname } from "node:path";
import { loadBasicConfig } from "../config/pipe-basic.ts";
import { runPipe } from "../pipe/direct.ts";
import { OutputWriter } from "../connectors/stdio/stdout.ts";
import { lineBatches, openInput } from "./input.ts";
import { explain } from "./where.ts";
import { readStreamsFile, ruleOptions, UsageError } from "./options.ts";
import { checkOptionKeys } from "./option-keys.ts";
import { createRunLimits, parseCount, parseTimeout, untilAborted } from "./run-limits.ts";

/** An eKuiper rule .json: its SQL, options, and whether it has actions. */
async function readRule(path: string): Promise<{ sql: string; id?: string; options: Record<string, unknown>; actions: unknown[]; graph?: unknown }> {
  const text = await Bun.file(path).text();
  if (extname(path).toLowerCase() !== ".json") return { sql: text, options: {}, actions: [] };
  let rule: { id?: unknown; sql?: unknown; options?: unknown; actions?: unknown; graph?: unknown };
  try {
    rule = JSON.parse(text) as typeof rule;
  } catch (e) {
    throw new UsageError(`${path}: not valid JSON: ${(e as Error).message}`);
  }
  const hasGraph = rule.graph !== undefined && rule.graph !== null;
  if (typeof rule.sql !== "string" && !hasGraph) throw new UsageError(`${path}: the rule has no "sql" string nor "graph"`);
  return {
    sql: typeof rule.sql === "string" ? rule.sql : "",
    ...(hasGraph ? { graph: rule.graph } : {}),
    id: typeof rule.id === "string" ? rule.id : undefined,
    options: rule.options && typeof rule.options === "object" ? (rule.options as Record<string, unknown>) : {},
    actions: Array.isArray(rule.actions) ? rule.actions : [],
  };
}

/**
 * `--no-actions` for a graph rule: its sink nodes become `nop` sinks, so standard output still
 * receives what each sink would have (graph-rules.md) and nothing is sent anywhere.
 */
function withoutSinks(graph: unknown): unknown {
  if (!graph || typeof graph !== "object" || Array.isArray(graph)) return graph;
  const g = graph as { nodes?: unknown };
  if (!g.nodes || typeof g.nodes !== "object" || Array.isArray(g.nodes)) return graph;
  const nodes: Record<string, unknown> = {};
  for (const [name, n] of Object.entries(g.nodes as Record<string, unknown>)) {
    const isSink = n !== null && typeof n === "object" && String((n as { type?: unknown }).type).toLowerCase() === "sink";
    nodes[name] = isSink ? { ...(n as object), nodeType: "nop", props: {} } : n;
  }
  return { ...g, nodes };
}

/** The input batches until the reader of standard output went away. */
async function* untilBroken(input: AsyncIterable<string[]>, out: OutputWriter): AsyncIterable<string[]> {
  for await (const b of input) {
    if (out.broken) return;
    yield b;
  }
}

/** ` (2 decode error(s), 1 row error(s))`: what the lost/rejected count is made of. */
function breakdown(res: { lost: number; decodeErrors: number; rowErrors: number }): string {
  const parts: string[] = [];
  if (res.decodeErrors) parts.push(`${res.decodeErrors} decode error(s)`);
  if (res.rowErrors) parts.push(`${res.rowErrors} row error(s)`);
  const dropped = res.lost - res.decodeErrors;
  if (dropped) parts.push(`${dropped} late row(s), row(s) over the windows' cap or sink failure(s)`);
  return parts.length ? ` (${parts.join(", ")})` : "";
}

export default defineCommand({
  meta: {
    name: "run",
    description:
      "Run one eKuiper rule over JSON lines and print the results as JSON lines\n\n" +
      "Examples:\n" +
      "  floe run rules/demo.sql --input fixtures/demo.jsonl\n" +
      "  tail -f fixtures/events.jsonl | floe run rules/hot.sql -o sendError=true\n" +
      "  floe run rules/win.sql --input fixtures/case.ndjson --replay --emit array --on-eof drop\n" +
      "  floe run rule.json --streams streams.sql --no-actions   # an eKuiper rule .json, results only\n" +
      "  floe run mqtt-rule.sql -C 5 --timeout 30s   # a live MQTT stream: the first 5 results, 30 s at most\n\n" +
      "RULE is a .sql file (CREATE STREAM/TABLE statements, then one SELECT; with no CREATE, the\n" +
      "streams it reads are schemaless) or an eKuiper rule .json (streams from --streams).\n" +
      "Decode errors and row errors go to stderr (the first 10 in full, with their line or source,\n" +
      "then a count per second). Rule options given with -o are checked: a misspelt key is an error.\n" +
      "-C and --timeout end a live run (a connector stream, or `tail -f` input) as end of input would:\n" +
      "with --on-eof flush, open windows are emitted (within the count), then floe exits 0.\n" +
      "Exit status: 0 done, 1 the rule failed or stopped by error, 2 bad usage, 3 records were lost\n" +
      "or rejected (decode errors, row errors, late rows, sink failures) and --strict was given.",
  },
  args: {
    rule: { type: "positional", required: true, description: "rule file: .sql or eKuiper rule .json" },
    input: { type: "string", description: "input file of JSON lines ('-' or absent: standard input)", valueHint: "FILE" },
    replay: { type: "boolean", description: "lines are envelopes {stream, ts, data|raw, meta} on a virtual clock" },
    emit: { type: "enum", options: ["rows", "array"], default: "rows", description: "one JSON object per row, or one JSON array per emission" },
    "on-eof": { type: "enum", options: ["flush", "drop"], default: "flush", description: "at end of input: close and emit open windows, or stop at once" },
    option: { type: "string", alias: "o", description: "rule option KEY=VALUE, repeatable (VALUE is JSON if it parses)", valueHint: "KEY=VALUE" },
    streams: { type: "string", description: "a .sql file of CREATE statements (for .json rules)", valueHint: "FILE" },
    status: { type: "string", description: "write the rule status (eKuiper's keys) to FILE at the end", valueHint: "FILE" },
    etc: { type: "string", description: "configuration directory holding kuiper.yaml (basic.timezone ...); it must exist", valueHint: "DIR" },
    count: { type: "string", alias: "C", description: "stop after N results (rows; emissions with --emit array), exit 0", valueHint: "N" },
    timeout: { type: "string", description: "stop after duration D (30s, 1m, 500ms, or seconds), exit 0", valueHint: "D" },
    strict: { type: "boolean", description: "exit 3 when records were lost or rejected (decode errors, row errors, late rows, sink failures)" },
    actions: { type: "boolean", default: true, description: "run a .json rule's actions as well as stdout", negativeDescription: "print results only; skip a .json rule's actions (a graph rule's sink nodes too)" },
  },
  async run({ args, rawArgs }) {
    if (args._.length > 1) throw new UsageError(`floe run takes one RULE file, got ${args._.length} (${args._.join(" ")}); floe check takes several`);
    if (args.etc !== undefined && !existsSync(args.etc)) throw new UsageError(`--etc ${args.etc}: no such directory`);
    const options = ruleOptions(rawArgs);
    checkOptionKeys(options);
    const count = args.count === undefined ? undefined : parseCount(args.count);
    const timeoutMs = args.timeout === undefined ? undefined : parseTimeout(args.timeout);
    const rule = await readRule(args.rule).catch((e: unknown) => {
      if (e instanceof UsageError) throw e;
      throw new UsageError(`cannot read rule ${args.rule}: ${(e as Error).message}`);
    });
    if (args.input && args.input !== "-" && !existsSync(args.input)) throw new UsageError(`cannot read input ${args.input}: no such file`);
    const streamsSql = await readStreamsFile(args.streams);
    const config = await loadBasicConfig(args.etc);
    const stdout = new OutputWriter();
    const limits = createRunLimits(stdout.write, count, timeoutMs);
    const lines = lineBatches(openInput(args.input));
    // Only a limited run races each read against its end (one promise more per batch).
    const limited = count !== undefined || timeoutMs !== undefined;
    const run = runPipe({
      sql: rule.sql,
      streamsSql,
      ruleId: rule.id,
      options: { ...rule.options, ...options },
      input: untilBroken(limited ? untilAborted(lines, limits.signal) : lines, stdout),
      actions: args.actions ? rule.actions : [],
      graph: args.actions ? rule.graph : withoutSinks(rule.graph),
      signal: limits.signal,
      etcDir: args.etc,
      replay: !!args.replay,
      emit: args.emit as "rows" | "array",
      onEof: args["on-eof"] as "flush" | "drop",
      zone: config.timezone,
      ignoreCase: config.ignoreCase,
      enablePrivateNet: config.enablePrivateNet,
      dataServer: config.dataServer,
      write: limits.write,
      drain: stdout.drain,
      warn: (t) => void process.stderr.write(t),
    });
    // The reader of standard output went away (`| head`): stop quietly with 0, as Unix filters do.
    // A .json rule with actions runs on to the end of its input so its sinks are not cut off.
    const res = await (rule.actions.length && args.actions ? run : Promise.race([run, stdout.closed.then(() => undefined)])).finally(limits.dispose);
    if (res === undefined || stdout.broken) return 0;
    if (res.error !== undefined) {
      const json = extname(args.rule).toLowerCase() === ".json";
      process.stderr.write(explain(res.error, { file: json ? `${args.rule} (sql)` : args.rule, sql: rule.sql, streamsFile: args.streams, streamsSql }));
    }
    await stdout.end();
    if (args.status && res.status) await Bun.write(args.status, JSON.stringify(res.status, null, 2) + "\n");
    const rejected = res.lost + res.rowErrors;
    if (rejected > 0) process.stderr.write(`floe: ${rejected} record(s) lost or rejected${breakdown(res)}\n`);
    if (res.exitCode !== 0) return res.exitCode;
    return args.strict && rejected > 0 ? 3 : 0;
  },
});
