/** `floe completion bash|zsh|fish`: a completion script for the commands and their flags. */
import { defineCommand, type ArgsDef } from "citty";
import { completionScript, type Shell } from "./completion-script.ts";

export default defineCommand({
  meta: {
    name: "completion",
    description:
      "Print a shell completion script\n\n" +
      "Examples:\n" +
      "  floe completion bash > ~/.local/share/bash-completion/completions/floe\n" +
      "  floe completion zsh > \"${fpath[1]}/_floe\"\n" +
      "  floe completion fish > ~/.config/fish/completions/floe.fish\n\n" +
      "`make install` installs all three.",
  },
  args: {
    shell: { type: "positional", required: true, description: "bash, zsh or fish" },
  },
  async run({ args }) {
    const { UsageError } = await import("./options.ts");
    const shell = args.shell as Shell;
    if (!["bash", "zsh", "fish"].includes(shell)) throw new UsageError(`floe completion: unknown shell ${JSON.stringify(args.shell)} (bash, zsh or fish)`);
    const commands: Record<string, string[]> = {};
    const defs: Record<string, () => Promise<{ default: { args?: unknown } }>> = {
      run: () => import("./run.ts"),
      test: () => import("./test.ts"),
      check: () => import("./check.ts"),
    };
    for (const [name, load] of Object.entries(defs)) {
      const a = ((await load()).default.args ?? {}) as ArgsDef;
      commands[name] = Object.entries(a).flatMap(([n, d]) => (d.type === "positional" ? [] : d.type === "boolean" ? [`--${n}`, `--no-${n}`] : [`--${n}`]));
      commands[name].push("--help");
    }
    commands.serve = ["--etc", "--data", "--log", "--loadFileType", "--safe", "--log-level", "--log-format", "--help"];
    commands.completion = ["bash", "zsh", "fish"];
    const { KUIPER_VERBS } = await import("./kuiper/verbs.ts");
    for (const v of KUIPER_VERBS) commands[v] = ["--help"];
    commands.help = Object.keys(commands);
    process.stdout.write(completionScript(shell, commands));
    return 0;
  },
});
