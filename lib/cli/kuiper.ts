/**
 * The kuiper verbs as floe subcommands (`floe show rules`, `floe create stream …`), and kuiper mode (argv[0]).
 * The client (kuiper/index.ts, with readline for `query`) loads when a verb runs, not for its --help.
 */
import { defineCommand, type CommandDef } from "citty";
import pkg from "../../package.json" with { type: "json" };
import { KUIPER_VERBS } from "./kuiper/verbs.ts";
import { verbDescription } from "./kuiper-help.ts";

export { KUIPER_VERBS };

const io = { print: (s: string) => void process.stdout.write(s), version: pkg.version };

export function verbCommand(verb: string): CommandDef {
  return defineCommand({
    meta: { name: verb, description: verbDescription(verb) },
    run: async ({ rawArgs }) => (await import("./kuiper/index.ts")).runKuiper([verb, ...rawArgs], io),
  });
}

/** Whole command line in kuiper mode (the binary invoked as `kuiper`). */
export async function kuiperMain(argv: string[]): Promise<number> {
  return (await import("./kuiper/index.ts")).runKuiper(argv, io);
}
