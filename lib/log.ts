/**
 * The daemon's logger: consola (core build, no fancy reporter) writing one line per entry to
 * stderr in logrus' text shape, as eKuiper's log reads: `time="…" level=error msg="…"`.
 * stdout is never written (pipe mode keeps it for data). Minimal on purpose: levels and a
 * timestamp; `--log-level` and log files are another issue's.
 */
import { createConsola, type ConsolaInstance, type LogObject } from "consola/core";

export type Level = "error" | "warn" | "info" | "debug";

export interface Logger {
  error(msg: string): void;
  warn(msg: string): void;
  info(msg: string): void;
  debug(msg: string): void;
}

const LEVEL_NAMES: Record<string, Level> = { fatal: "error", error: "error", warn: "warn", log: "info", info: "info", success: "info", start: "info", ready: "info", box: "info", debug: "debug", trace: "debug", verbose: "debug" };

/** One logrus-style line: `time="2026-12-01T15:40:00.123Z" level=error msg="…"` (msg JSON-quoted). */
export function formatLine(date: Date, level: Level, msg: string): string {
  return `time="${date.toISOString()}" level=${level} msg=${JSON.stringify(msg)}\n`;
}

/** A logger writing formatted lines to `write` (stderr by default); consola's level 4 (debug) and below. */
export function createLogger(write: (line: string) => void = (l) => void process.stderr.write(l)): Logger {
  const c: ConsolaInstance = createConsola({
    level: 4,
    reporters: [
      {
        log(o: LogObject) {
          write(formatLine(o.date, LEVEL_NAMES[o.type] ?? "info", o.args.map(String).join(" ")));
        },
      },
    ],
  });
  return {
    error: (m) => c.error(m),
    warn: (m) => c.warn(m),
    info: (m) => c.info(m),
    debug: (m) => c.debug(m),
  };
}
