import { expect, test } from "bun:test";
import { createLogger, formatLine, parseLevel } from "../lib/log.ts";

test("a line is logrus' text shape: time, level, quoted message", () => {
  expect(formatLine(new Date(Date.UTC(2026, 11, 1, 15, 40, 0, 123)), "error", 'rule r1 is stopped by error: "x"')).toBe(
    'time="2026-12-01T15:40:00.123Z" level=error msg="rule r1 is stopped by error: \\"x\\""\n',
  );
});

test("each level writes one line through the given writer (stderr by default, never stdout)", () => {
  const lines: string[] = [];
  const log = createLogger((l) => void lines.push(l));
  log.error("e");
  log.warn("w");
  log.info("i");
  log.debug("d");
  expect(lines.map((l) => l.replace(/^time="[^"]+" /, ""))).toEqual(['level=error msg="e"\n', 'level=warn msg="w"\n', 'level=info msg="i"\n', 'level=debug msg="d"\n']);
  expect(lines[0]).toMatch(/^time="\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z" /);
});

test("a level drops what is below it; JSON lines on request", () => {
  const lines: string[] = [];
  const log = createLogger((l) => void lines.push(l), { level: "warn", format: "json" });
  log.info("dropped");
  log.warn("kept");
  log.setLevel("debug");
  log.debug("now kept");
  expect(lines.map((l) => JSON.parse(l) as { level: string; msg: string }).map((o) => [o.level, o.msg])).toEqual([
    ["warn", "kept"],
    ["debug", "now kept"],
  ]);
  expect(lines[0]).toMatch(/^\{"level":"warn","msg":"kept","time":"\d{4}-\d\d-\d\dT[\d:.]+Z"\}\n$/);
});

test("eKuiper's level names", () => {
  expect(parseLevel("DEBUG")).toBe("debug");
  expect(parseLevel("fatal")).toBe("error");
  expect(parseLevel("panic")).toBe("error");
  expect(parseLevel("trace")).toBe("debug");
  expect(parseLevel("loud")).toBeUndefined();
});
