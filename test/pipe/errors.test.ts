/**
 * Pipe mode's error report (pipe-mode.md): decode errors and row errors reach stderr with
 * where they happened, rate-limited, and are counted; a rule that stops by error fails the run.
 * The runner cases form one contract suite run against both runners: the file/replay runner
 * (lib/pipe/direct.ts) and the streaming runner (lib/pipe/live.ts, chosen here by giving the rule an action).
 */
import { describe, expect, test } from "bun:test";
import { UTC } from "../../lib/value/time.ts";
import { MqttMeta, SourceMessage } from "../../lib/source/message.ts";
import { LineMessage } from "../../lib/connectors/stdio/stdin.ts";
import { runPipe } from "../../lib/pipe/direct.ts";
import type { PipeResult } from "../../lib/pipe/request.ts";
import { ERRORS_IN_FULL, RateLimitedErrors } from "../../lib/runtime/rate-limited-errors.ts";
import { messageWhere } from "../../lib/runtime/error-report.ts";
import { waitFor } from "../helpers/runtime.ts";

const DIV = "run Select error: alias: r expr: binaryExpr:{ s.temperature / s.humidity } meet error, err:divided by zero";

describe("the reporter", () => {
  test("the first errors are written in full, the rest counted once per interval, then summed up at the end", async () => {
    let err = "";
    const r = new RateLimitedErrors((t) => void (err += t), { limit: 3, intervalMs: 20 });
    for (let i = 1; i <= 5; i++) r.row(`line ${i}`, "boom");
    expect(err).toBe("floe: line 1: boom\nfloe: line 2: boom\nfloe: line 3: boom\n");
    await waitFor(() => err.includes("more"), "the count line");
    expect(err).toEndWith("floe: 2 more error(s) in the last second (last: line 5: boom)\n");
    r.decode("line 6", "bad json");
    r.end();
    expect(err).toEndWith("floe: 1 more error(s) (last: line 6: bad json)\nfloe: 3 of 6 errors shown in full\n");
    expect([r.rowErrors, r.decodeErrors, r.total]).toEqual([5, 1, 6]);
  });

  test("no error, no output", () => {
    let err = "";
    const r = new RateLimitedErrors((t) => void (err += t));
    r.end();
    expect(err).toBe("");
    expect(r.total).toBe(0);
  });

  test("an error with no record to point at is written without a location", () => {
    let err = "";
    const r = new RateLimitedErrors((t) => void (err += t));
    r.row("", "run Select error: x");
    r.end();
    expect(err).toBe("floe: run Select error: x\n");
  });

  test("the failure that stops the rule is written at once, after the pending count, and only once", () => {
    let err = "";
    const r = new RateLimitedErrors((t) => void (err += t), { limit: 1, intervalMs: 60_000 });
    r.row("line 1", "a");
    r.row("line 2", "b");
    r.fatal("disk on fire");
    r.fatal("again");
    r.end();
    expect(err).toBe("floe: line 1: a\nfloe: 1 more error(s) (last: line 2: b)\nfloe: the rule stopped by error: disk on fire\nfloe: 1 of 2 errors shown in full\n");
    expect(r.fatalMessage).toBe("disk on fire");
  });

  test("a record is located by its stdin line, else by its source and MQTT topic", () => {
    expect(messageWhere("s", new LineMessage({}, 7))).toBe("line 7");
    expect(messageWhere("telem", new SourceMessage(new Uint8Array(), null, new MqttMeta("a/b", 1, 3)))).toBe("source telem, topic a/b");
    expect(messageWhere("s", new SourceMessage(null, {}, null))).toBe("source s");
  });
});

async function* batches(lines: string[], failAfter?: Error): AsyncIterable<string[]> {
  yield lines;
  if (failAfter) throw failAfter;
}

interface Outcome {
  readonly res: PipeResult;
  readonly out: string;
  readonly err: string;
}

/** The two runners: the streaming one is chosen by the rule having an action (a `nop` sink). */
const RUNNERS = [
  ["file runner", [] as unknown[]],
  ["streaming runner", [{ nop: {} }] as unknown[]],
] as const;

describe.each(RUNNERS)("%s", (_name, actions) => {
  async function run(sql: string, lines: string[], opts: { options?: Record<string, unknown>; failAfter?: Error } = {}): Promise<Outcome> {
    let out = "";
    let err = "";
    const res = await runPipe({
      sql,
      options: opts.options ?? {},
      input: batches(lines, opts.failAfter),
      actions,
      replay: false,
      emit: "rows",
      onEof: "flush",
      zone: UTC,
      write: (t) => void (out += t),
      warn: (t) => void (err += t),
    });
    return { res, out, err };
  }

  test("a row error is reported with its line number, counted, and the rule goes on", async () => {
    const { res, out, err } = await run("SELECT temperature / humidity AS r FROM s", ['{"temperature":30,"humidity":3}', '{"temperature":30,"humidity":0}', '{"temperature":40,"humidity":4}']);
    expect(out).toBe('{"r":10}\n{"r":10}\n');
    expect(err).toBe(`floe: line 2: ${DIV}\n`);
    expect(res.exitCode).toBe(0);
    expect([res.rowErrors, res.decodeErrors, res.lost]).toEqual([1, 0, 0]);
    expect(res.status!.op_2_project_0_exceptions_total).toBe(1);
    expect(res.status!.op_2_project_0_last_exception).toBe(DIV);
  });

  test("with sendError the row error is both emitted and reported", async () => {
    const { res, out, err } = await run("SELECT temperature / humidity AS r FROM s", ['{"temperature":30,"humidity":0}'], { options: { sendError: true } });
    expect(out).toBe(JSON.stringify({ error: DIV }) + "\n");
    expect(err).toBe(`floe: line 1: ${DIV}\n`);
    expect(res.rowErrors).toBe(1);
  });

  test("decode errors are reported with their line numbers and counted on the source", async () => {
    const { res, out, err } = await run("SELECT * FROM s", ['{"a":1}', "not json", "", "[1,2]", '{"a":2}']);
    expect(out).toBe('{"a":1}\n{"a":2}\n');
    const lines = err.trimEnd().split("\n");
    expect(lines).toHaveLength(2);
    expect(lines[0]).toStartWith("floe: line 2: ");
    expect(lines[1]).toBe("floe: line 4: only map[string]interface{} and []map[string]interface{} is supported");
    expect([res.decodeErrors, res.rowErrors, res.lost]).toEqual([2, 0, 2]);
    expect(res.status!.source_s_0_exceptions_total).toBe(2);
  });

  test("1,000 bad lines: the first ten in full, then counts; stderr stays small", async () => {
    const lines: string[] = [];
    for (let i = 0; i < 1000; i++) lines.push(i % 2 ? "{oops" : `{"temperature":${i},"humidity":0}`);
    lines.push('{"temperature":9,"humidity":3}');
    const { res, out, err } = await run("SELECT temperature / humidity AS r FROM s", lines);
    expect(out).toBe('{"r":3}\n');
    const got = err.trimEnd().split("\n");
    // The streaming runner decodes stdin as it reads and runs the rule afterwards: the two kinds
    // of error interleave differently, each in line order.
    expect(got).toHaveLength(ERRORS_IN_FULL + 2);
    for (const l of got.slice(0, ERRORS_IN_FULL)) expect(l).toMatch(/^floe: line \d+: (run Select error: .*divided by zero|JSON Parse error: .*)$/);
    expect(got[ERRORS_IN_FULL]).toMatch(/^floe: 990 more error\(s\) \(last: line \d+: .+\)$/);
    expect(got[ERRORS_IN_FULL + 1]).toBe("floe: 10 of 1000 errors shown in full");
    expect(err.length).toBeLessThan(2500);
    expect([res.rowErrors, res.decodeErrors, res.exitCode]).toEqual([500, 500, 0]);
  });

  test("an input that fails part-way stops the rule by error: exit 1, the message on stderr", async () => {
    const { res, out, err } = await run("SELECT * FROM s", ['{"a":1}'], { failAfter: new Error("EIO: i/o error, read") });
    expect(out).toBe('{"a":1}\n');
    expect(err).toBe("floe: the rule stopped by error: EIO: i/o error, read\n");
    expect(res.exitCode).toBe(1);
    expect(res.status!.status).toBe("stopped by error");
  });

  test("a clean run reports nothing", async () => {
    const { res, err } = await run("SELECT temperature / humidity AS r FROM s", ['{"temperature":30,"humidity":3}']);
    expect(err).toBe("");
    expect([res.exitCode, res.rowErrors, res.decodeErrors, res.lost]).toEqual([0, 0, 0, 0]);
  });
});

describe("replay", () => {
  test("a row error in a window emission is reported at the line whose arrival closed the window", async () => {
    let err = "";
    const lines = [
      { ts: 1000, data: { a: 1, b: 0 } },
      { ts: 2000, data: { a: 2, b: 0 } },
      { ts: 11000, data: { a: 3, b: 1 } },
    ].map((x) => JSON.stringify(x));
    const res = await runPipe({
      sql: "SELECT sum(a) / sum(b) AS r FROM s GROUP BY TUMBLINGWINDOW(ss, 10)",
      options: {},
      input: batches(lines),
      replay: true,
      emit: "rows",
      onEof: "drop",
      zone: UTC,
      write: () => {},
      warn: (t) => void (err += t),
    });
    expect(err).toMatch(/^floe: line 3: run Select error: .*divided by zero\n$/);
    expect(res.rowErrors).toBe(1);
  });

  test("ts going backwards still stops the run with the line named", async () => {
    let err = "";
    const res = await runPipe({
      sql: "SELECT * FROM s",
      options: {},
      input: batches(['{"ts":2000,"data":{"a":1}}', '{"ts":1000,"data":{"a":2}}']),
      replay: true,
      emit: "rows",
      onEof: "flush",
      zone: UTC,
      write: () => {},
      warn: (t) => void (err += t),
    });
    expect(res.exitCode).toBe(1);
    expect(err).toBe("floe: line 2: ts 1000 goes backwards (previous line had 2000)\n");
    expect(res.status!.message).toBe("line 2: ts 1000 goes backwards (previous line had 2000)");
  });
});
