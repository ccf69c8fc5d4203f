/** `floe serve`: the daemon (config-and-cli.md §1, §6; rest-api.md). Go-style flags, one or two dashes. */
import { defineCommand } from "citty";
import { existsSync } from "node:fs";
import pkg from "../../package.json" with { type: "json" };
import { parseLevel } from "../log.ts";
import { startDaemon } from "../server/daemon.ts";
import { UsageError } from "./options.ts";
import { didYouMean } from "../plan/suggest.ts";

const FLAGS = ["loadFileType", "etc", "data", "log", "plugins"] as const;
const BOOL_FLAGS = ["safe"];
/** Flags with a value read elsewhere (`--log-level` by the logger set-up). */
const OTHER_FLAGS = ["log-level", "log-format"];

/**
 * Go `flag` parsing of the server flags. Like Go's flag package (eKuiper exits 2 with "flag
 * provided but not defined"), an unknown flag or a stray argument is a usage error, here with a
 * suggestion; `-safe` and `-log-level` are read by their own functions.
 */
export function serverFlags(argv: string[]): Partial<Record<(typeof FLAGS)[number], string>> {
  const out: Partial<Record<(typeof FLAGS)[number], string>> = {};
  const known = [...FLAGS, ...BOOL_FLAGS, ...OTHER_FLAGS];
  for (let i = 0; i < argv.length; i++) {
    const m = /^--?([A-Za-z-]+)(?:=(.*))?$/.exec(argv[i]!);
    if (!m) throw new UsageError(`floe serve takes flags only, not ${JSON.stringify(argv[i])} (floe serve --help lists them)`);
    if (BOOL_FLAGS.some((f) => f.toLowerCase() === m[1]!.toLowerCase())) continue;
    if (OTHER_FLAGS.some((f) => f.toLowerCase() === m[1]!.toLowerCase())) {
      if (m[2] === undefined) i++;
      continue;
    }
    const name = FLAGS.find((f) => f.toLowerCase() === m[1]!.toLowerCase());
    if (!name) throw new UsageError(`unknown flag ${argv[i]!.replace(/=.*$/, "")} for floe serve${didYouMean(`--${m[1]}`, known.map((k) => `--${k}`)) || " (floe serve --help lists them)"}`);
    const value = m[2] ?? argv[++i];
    if (value === undefined) throw new UsageError(`flag needs an argument: -${m[1]}`);
    out[name] = value;
  }
  return out;
}

/** `-safe`, `--safe` or `--safe=true|false` (a Go bool flag): serve without starting rules or loading UDFs. */
export function safeFlag(argv: string[]): boolean {
  let on = false;
  for (const a of argv) {
    const m = /^--?safe(?:=(.*))?$/i.exec(a);
    if (m) on = m[1] === undefined || ["1", "t", "true", "T", "TRUE", "True"].includes(m[1]);
  }
  return on;
}

/** `--log-level X` / `-log-level=X` and `--log-format text|json` (last one wins). */
export function logFlags(argv: string[]): { logLevel?: string; logFormat?: "text" | "json" } {
  const out: { logLevel?: string; logFormat?: "text" | "json" } = {};
  for (let i = 0; i < argv.length; i++) {
    const m = /^--?log-(level|format)(?:=(.*))?$/i.exec(argv[i]!);
    if (!m) continue;
    const v = m[2] ?? argv[++i];
    if (v === undefined) throw new UsageError(`flag needs an argument: -log-${m[1]}`);
    if (m[1]!.toLowerCase() === "level") {
      if (!parseLevel(v)) throw new UsageError(`--log-level must be one of debug, info, warn, error (got ${JSON.stringify(v)})`);
      out.logLevel = v;
    } else {
      if (v !== "text" && v !== "json") throw new UsageError(`--log-format must be text or json (got ${JSON.stringify(v)})`);
      out.logFormat = v;
    }
  }
  return out;
}

export default defineCommand({
  meta: {
    name: "serve",
    description:
      "Run the daemon: eKuiper's REST API, persistence under the data dir, the rules\n\n" +
      "Examples:\n" +
      "  floe serve                                  # etc/, data/, log/ found from the working directory up\n" +
      "  floe serve -etc ./etc -data ./data -log ./log\n" +
      "  KUIPER__BASIC__RESTPORT=9082 floe serve     # another REST port (any kuiper.yaml key: KUIPER__SECTION__KEY)\n" +
      "  KUIPER__BASIC__PROMETHEUS=true floe serve   # /metrics on :20499\n" +
      "  floe serve --safe                           # REST only: no rule starts, no UDF script loads\n\n" +
      "Flags (Go style, one or two dashes; an unknown flag is an error):\n" +
      "  -etc DIR             configuration (kuiper.yaml, sources/, connections/); it must exist.\n" +
      "                       Without -etc: ./etc or a parent's, else the built-in defaults\n" +
      "  -data DIR            definitions and state (sqlite); it must exist. Without -data: ./data\n" +
      "                       or a parent's, else ./data, created\n" +
      "  -log DIR             log directory (with basic.fileLog: DIR/stream.log, rotated)\n" +
      "  -loadFileType relative|absolute   absolute: /etc/kuiper, /var/lib/kuiper/data, /var/log/kuiper\n" +
      "  -safe                serve REST without starting rules or loading UDF scripts (also entered after\n" +
      "                       3 starts in a row that ended within 30 s; FLOE_SAFE_AFTER_CRASHES=N, 0 = never)\n" +
      "  -log-level LEVEL     error|warn|info|debug (default: basic.logLevel, info)\n" +
      "  -log-format text|json   logrus-style text lines, or one JSON object per line\n\n" +
      "The REST API listens on basic.restIp:restPort (127.0.0.1:9081), the kuiper-style CLI on\n" +
      "basic.ip:port (127.0.0.1:20498). SIGTERM or SIGINT stops it gracefully.",
  },
  async run({ rawArgs }) {
    const flags = serverFlags(rawArgs);
    // An explicit directory that is not there is a typo, not a request for the built-in defaults.
    for (const k of ["etc", "data"] as const) {
      const dir = flags[k];
      if (dir !== undefined && !existsSync(dir)) throw new UsageError(`-${k} ${dir}: no such directory${k === "data" ? " (create it first: mkdir -p " + dir + ")" : ""}`);
    }
    const d = await startDaemon({ ...flags, ...logFlags(rawArgs), safe: safeFlag(rawArgs), version: pkg.version });
    return await d.done;
  },
});
