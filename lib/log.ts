/**
 * The daemon's logger: consola (core build, no fancy reporter) writing one line per entry in
 * logrus' text shape, as eKuiper's log reads (`time="…" level=error msg="…"`), or one JSON
 * object per line on request. stdout is never written (pipe mode keeps it for data): lines go
 * to `write` (stderr by default; the daemon adds the rotating file of log-file.ts).
 */
import { createConsola, type ConsolaInstance, type LogObject } from "consola/core";

export type Level = "error" | "warn" | "info" | "debug";
export type LogFormat = "text" | "json";

export interface Logger {
  error(msg: string): void;
  warn(msg: string): void;
  info(msg: string): void;
  debug(msg: string): void;
  /** Entries below `level` are dropped from now on. */
  setLevel(level: Level): void;
  setFormat(format: LogFormat): void;
}

const LEVEL_NAMES: Record<string, Level> = { fatal: "error", error: "error", warn: "warn", log: "info", info: "info", success: "info", start: "info", ready: "info", box: "info", debug: "debug", trace: "debug", verbose: "debug" };
/** consola's numeric levels. */
const CONSOLA_LEVEL: Record<Level, number> = { error: 0, warn: 1, info: 3, debug: 4 };

/**
 * eKuiper's `basic.logLevel` (or `--log-level`) as a floe level: `fatal` and `panic` log errors only,
 * `trace` is `debug`; anything else is undefined (eKuiper leaves the level unchanged).
 */
export function parseLevel(s: string | undefined): Level | undefined {
  const l = (s ?? "").toLowerCase();
  if (l === "debug" || l === "trace") return "debug";
  if (l === "info" || l === "warn" || l === "error") return l;
  if (l === "warning") return "warn";
  if (l === "fatal" || l === "panic") return "error";
  return undefined;
}

/** One logrus-style line: `time="2026-12-01T15:40:00.123Z" level=error msg="…"` (msg JSON-quoted). */
export function formatLine(date: Date, level: Level, msg: string): string {
  return `time="${date.toISOString()}" level=${level} msg=${JSON.stringify(msg)}\n`;
}

/** One JSON line, logrus' JSONFormatter keys: `{"level":"info","msg":"…","time":"…"}`. */
export function formatJson(date: Date, level: Level, msg: string): string {
  return `{"level":"${level}","msg":${JSON.stringify(msg)},"time":"${date.toISOString()}"}\n`;
}

/** A logger writing formatted lines to `write` (stderr by default); `level` defaults to debug (all). */
export function createLogger(write: (line: string) => void = (l) => void process.stderr.write(l), opts: { level?: Level; format?: LogFormat } = {}): Logger {
  let format: LogFormat = opts.format ?? "text";
  const c: ConsolaInstance = createConsola({
    level: CONSOLA_LEVEL[opts.level ?? "debug"],
    reporters: [
      {
        log(o: LogObject) {
          const f = format === "json" ? formatJson : formatLine;
          write(f(o.date, LEVEL_NAMES[o.type] ?? "info", o.args.map(String).join(" ")));
        },
      },
    ],
  });
  return {
    error: (m) => c.error(m),
    warn: (m) => c.warn(m),
    info: (m) => c.info(m),
    debug: (m) => c.debug(m),
    setLevel: (l) => void (c.level = CONSOLA_LEVEL[l]),
    setFormat: (f) => void (format = f),
  };
}
