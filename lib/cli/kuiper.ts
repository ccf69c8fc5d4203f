/** The kuiper verbs as floe subcommands (`floe show rules`, `floe create stream …`), and kuiper mode (argv[0]). */
import { defineCommand, type CommandDef } from "citty";
import pkg from "../../package.json" with { type: "json" };
import { KUIPER_VERBS, runKuiper } from "./kuiper/index.ts";
import { verbDescription } from "./kuiper-help.ts";

export { KUIPER_VERBS };

const io = { print: (s: string) => void process.stdout.write(s), version: pkg.version };

export function verbCommand(verb: string): CommandDef {
  return defineCommand({
    meta: { name: verb, description: verbDescription(verb) },
    run: ({ rawArgs }) => runKuiper([verb, ...rawArgs], io),
  });
}

/** Whole command line in kuiper mode (the binary invoked as `kuiper`). */
export function kuiperMain(argv: string[]): Promise<number> {
  return runKuiper(argv, io);
}
