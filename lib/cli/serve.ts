/** `floe serve`: the daemon (config-and-cli.md §1, §6; rest-api.md). Go-style flags, one or two dashes. */
import { defineCommand } from "citty";
import pkg from "../../package.json" with { type: "json" };
import { startDaemon } from "../server/daemon.ts";
import { UsageError } from "./options.ts";

const FLAGS = ["loadFileType", "etc", "data", "log", "plugins"] as const;

/** Go `flag` parsing of the server flags; unknown flags are ignored like eKuiper's. */
export function serverFlags(argv: string[]): Partial<Record<(typeof FLAGS)[number], string>> {
  const out: Partial<Record<(typeof FLAGS)[number], string>> = {};
  for (let i = 0; i < argv.length; i++) {
    const m = /^--?([A-Za-z]+)(?:=(.*))?$/.exec(argv[i]!);
    if (!m) continue;
    const name = FLAGS.find((f) => f.toLowerCase() === m[1]!.toLowerCase());
    if (!name) continue;
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

export default defineCommand({
  meta: {
    name: "serve",
    description:
      "Run the daemon: eKuiper's REST API (default 127.0.0.1:9081), persistence under the data dir, rules.\n\n" +
      "  floe serve --etc ./etc --data ./data\n" +
      "  KUIPER__BASIC__RESTPORT=9082 floe serve\n\n" +
      "Flags (Go style, - or --): -etc DIR, -data DIR, -log DIR, -loadFileType relative|absolute,\n" +
      "  -safe (serve REST without starting rules or loading UDF scripts, to inspect and delete them;\n" +
      "  also entered by itself after 3 starts in a row that ended within 30 s: FLOE_SAFE_AFTER_CRASHES=N, 0 = never).",
  },
  async run({ rawArgs }) {
    const flags = serverFlags(rawArgs);
    const d = await startDaemon({ ...flags, safe: safeFlag(rawArgs), version: pkg.version });
    return await d.done;
  },
});
