/** `floe completion bash|zsh|fish`: a completion script for the commands and their flags. */
import { defineCommand, type ArgsDef } from "citty";
import { completionScript, type CommandCompletion, type Shell } from "./completion-script.ts";

export default defineCommand({
  meta: {
    name: "completion",
    description:
      "Print a shell completion script\n\n" +
      "Examples:\n" +
      "  floe completion bash > ~/.local/share/bash-completion/completions/floe\n" +
      "  floe completion zsh > \"${fpath[1]}/_floe\"\n" +
      "  floe completion fish > ~/.config/fish/completions/floe.fish\n\n" +
      "`make install` installs all three. They complete the commands, each command's flags, the words\n" +
      "after a verb (`floe show <TAB>`: streams, tables, rules …), flag values (`--emit <TAB>`: rows,\n" +
      "array; `-o <TAB>`: the rule option keys) and file names.",
  },
  args: {
    shell: { type: "positional", required: true, description: "bash, zsh or fish" },
  },
  async run({ args }) {
    const { UsageError } = await import("./options.ts");
    const shell = args.shell as Shell;
    if (!["bash", "zsh", "fish"].includes(shell)) throw new UsageError(`floe completion: unknown shell ${JSON.stringify(args.shell)} (bash, zsh or fish)`);
    const { RULE_OPTION_KEYS } = await import("./option-keys.ts");
    const table: Record<string, CommandCompletion> = {};
    const defs: Record<string, () => Promise<{ default: { args?: unknown } }>> = {
      run: () => import("./run.ts"),
      test: () => import("./test.ts"),
      check: () => import("./check.ts"),
    };
    for (const [name, load] of Object.entries(defs)) {
      const flags: string[] = [];
      const values: Record<string, string[]> = {};
      for (const [n, d] of Object.entries(((await load()).default.args ?? {}) as ArgsDef)) {
        if (d.type === "positional") continue;
        const alias = (d as { alias?: string }).alias;
        const names = [`--${n}`, ...(alias ? [alias.length === 1 ? `-${alias}` : `--${alias}`] : [])];
        flags.push(...names, ...(d.type === "boolean" ? [`--no-${n}`] : []));
        const options = d.type === "enum" ? (d as { options?: string[] }).options : n === "option" ? RULE_OPTION_KEYS.map((k) => `${k}=`) : undefined;
        if (options) for (const f of names) values[f] = options;
      }
      table[name] = { flags: [...flags, "--help"], words: [], values };
    }
    table.serve = {
      flags: ["--etc", "--data", "--log", "--loadFileType", "--safe", "--log-level", "--log-format", "--help"],
      words: [],
      values: { "--loadFileType": ["relative", "absolute"], "--log-level": ["debug", "info", "warn", "error"], "--log-format": ["text", "json"] },
    };
    table.completion = { flags: ["--help"], words: ["bash", "zsh", "fish"], values: {} };
    const { KUIPER_VERBS, VERB_OBJECTS } = await import("./kuiper/verbs.ts");
    for (const v of KUIPER_VERBS) table[v] = { flags: ["--help"], words: VERB_OBJECTS[v] ?? [], values: {} };
    table.help = { flags: [], words: Object.keys(table), values: {} };
    process.stdout.write(completionScript(shell, table));
    return 0;
  },
});
