/**
 * The kuiper verbs as floe subcommands (`floe show rules`, `floe create stream …`), and kuiper mode (argv[0]).
 * The client (kuiper/index.ts, with readline for `query`) loads when a verb runs, not for its --help.
 */
import { defineCommand, type CommandDef } from "citty";
import pkg from "../../package.json" with { type: "json" };
import { KUIPER_VERBS } from "./kuiper/verbs.ts";
import { verbDescription } from "./kuiper-help.ts";

export { KUIPER_VERBS };

const print = (s: string) => void process.stdout.write(s);
/** `kuiper`: eKuiper's CLI exactly — every line on standard output, exit 0. */
const kuiperIo = { print, version: pkg.version };
/** `floe <verb>`: results on standard output, the rest on standard error, an exit status that tells. */
const floeIo = { print, error: (s: string) => void process.stderr.write(s), strict: true, version: pkg.version };

export function verbCommand(verb: string): CommandDef {
  return defineCommand({
    meta: { name: verb, description: verbDescription(verb) },
    run: async ({ rawArgs }) => (await import("./kuiper/index.ts")).runKuiper([verb, ...rawArgs], floeIo),
  });
}

/** Whole command line in kuiper mode (the binary invoked as `kuiper`). */
export async function kuiperMain(argv: string[]): Promise<number> {
  return (await import("./kuiper/index.ts")).runKuiper(argv, kuiperIo);
}
