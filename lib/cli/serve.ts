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

export default defineCommand({
  meta: {
    name: "serve",
    description:
      "Run the daemon: eKuiper's REST API (default 127.0.0.1:9081), persistence under the data dir, rules.\n\n" +
      "  floe serve --etc ./etc --data ./data\n" +
      "  KUIPER__BASIC__RESTPORT=9082 floe serve\n\n" +
      "Flags (Go style, - or --): -etc DIR, -data DIR, -log DIR, -loadFileType relative|absolute.",
  },
  async run({ rawArgs }) {
    const flags = serverFlags(rawArgs);
    const d = await startDaemon({ ...flags, version: pkg.version });
    return await d.done;
  },
});
