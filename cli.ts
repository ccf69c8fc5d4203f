#!/usr/bin/env bun
/**
 * floe's command line (citty). Maps outcomes to exit codes and is the only place that calls
 * process.exit — after every command has flushed its output. Exit 2 and one line on stderr for
 * bad usage; 1 and one line for a failure (the stack only with FLOE_DEBUG=1); 0 quietly when the
 * reader of standard output went away (EPIPE: `floe run … | head`).
 */
import pkg from "./package.json" with { type: "json" };

const PIPE_COMMANDS = ["run", "test", "check"] as const;

async function exitCode(argv: string[]): Promise<number> {
  const { runCommand } = await import("citty");
  const { UsageError } = await import("./lib/cli/options.ts");
  const { commandHelp, topHelp, style, useColor } = await import("./lib/cli/help.ts");
  const { checkArgs } = await import("./lib/cli/strict.ts");
  const { didYouMean } = await import("./lib/plan/suggest.ts");
  type Command = import("citty").CommandDef<import("citty").ArgsDef>;
  const load = (p: Promise<{ default: unknown }>) => p.then((m) => m.default as Command);
  const subCommands: Record<string, () => Promise<Command>> = {
    run: () => load(import("./lib/cli/run.ts")),
    test: () => load(import("./lib/cli/test.ts")),
    check: () => load(import("./lib/cli/check.ts")),
    serve: () => load(import("./lib/cli/serve.ts")),
    completion: () => load(import("./lib/cli/completion.ts")),
  };
  // Only the verbs' names load here: a verb's command (and its client) loads when it is named.
  const { KUIPER_VERBS } = await import("./lib/cli/kuiper/verbs.ts");
  for (const v of KUIPER_VERBS) subCommands[v] = async () => (await import("./lib/cli/kuiper.ts")).verbCommand(v) as Command;
  // Only help reads process.stdout: creating Bun's node-style stdout stream costs more CPU than the
  // rest of `floe --version` (start-up time); pipe mode writes through Bun.stdout.
  const s = () => style(useColor(process.stdout.isTTY === true));
  const summary = async (name: string) => ((((await subCommands[name]!()).meta ?? {}) as { description?: string }).description ?? "").split("\n")[0]!;
  const top = async (st = s()) =>
    topHelp(
      "floe",
      pkg.version,
      "edge stream processing with eKuiper's SQL, rules and REST API",
      [
        { title: "Pipe mode (no server):", commands: await Promise.all(PIPE_COMMANDS.map(async (n) => [n, await summary(n)] as [string, string])) },
        { title: "Daemon:", commands: [["serve", await summary("serve")]] },
        { title: "Management (kuiper-style; a client of floe serve):", commands: await Promise.all(KUIPER_VERBS.map(async (n) => [n, await summary(n)] as [string, string])) },
        { title: "Other:", commands: [["completion", await summary("completion")], ["help", "help for a command: floe help run"]] },
      ],
      [
        "floe run rules/demo.sql --input fixtures/demo.jsonl",
        "floe check rules/*.sql",
        "floe test fixtures/golden",
        "floe serve --etc ./etc --data ./data",
        "floe show rules",
      ],
      st,
    );
  try {
    if (argv.length === 0) {
      process.stderr.write(await top(style(useColor(process.stderr.isTTY === true))));
      return 2;
    }
    if (argv[0] === "--help" || argv[0] === "-h" || (argv[0] === "help" && argv.length === 1)) {
      process.stdout.write(await top());
      return 0;
    }
    const helpFor = argv[0] === "help" ? argv[1]! : undefined;
    const name = helpFor ?? argv[0]!;
    const sub = subCommands[name];
    if (!sub) {
      const hint = name.startsWith("-") ? `unknown flag ${name}` : `unknown command ${JSON.stringify(name)}`;
      throw new UsageError(`${hint}${didYouMean(name, Object.keys(subCommands))} (floe --help lists them)`);
    }
    const cmd = await sub();
    const rest = argv.slice(1);
    const dashDash = rest.indexOf("--");
    const flagsPart = dashDash < 0 ? rest : rest.slice(0, dashDash);
    if (helpFor !== undefined || flagsPart.includes("--help") || flagsPart.includes("-h")) {
      process.stdout.write(commandHelp("floe", cmd, s()));
      return 0;
    }
    if (cmd.args) checkArgs(`floe ${name}`, cmd.args as import("citty").ArgsDef, rest);
    // The subcommand runs directly: citty drops a subcommand's result, which carries the exit code.
    const { result } = await runCommand(cmd, { rawArgs: rest });
    return typeof result === "number" ? result : 0;
  } catch (e) {
    return failure(e, UsageError);
  }
}

/** Exit status and the one line on stderr for a thrown error. */
function failure(e: unknown, UsageError: new (m: string) => Error): number {
  const code = String((e as { code?: unknown } | null)?.code ?? "");
  if (code === "EPIPE") return 0;
  const message = (e instanceof Error ? e.message : String(e)).replace(/\x1b\[[0-9;]*m/g, "");
  if (e instanceof UsageError || code === "EARG" || code.startsWith("E_")) {
    process.stderr.write(`floe: ${message}\n`);
    return 2;
  }
  if (process.env.FLOE_DEBUG === "1" && e instanceof Error) process.stderr.write(`floe: ${e.stack ?? message}\n`);
  else process.stderr.write(`floe: ${message}${code && !message.includes(code) ? ` (${code})` : ""}\n`);
  return 1;
}

// The reader of standard output went away (`| head`): nothing more to say, and not an error.
// Bun's stdout sink can report EPIPE again, asynchronously, after the writer has handled it.
// Other failures: one line (the stack with FLOE_DEBUG=1) — unless the daemon has its own handler.
const onEpipe = (e: unknown) => {
  if ((e as { code?: unknown } | null)?.code === "EPIPE") process.exit(0);
  if (process.listenerCount("uncaughtException") > 1) return;
  process.stderr.write(`floe: ${process.env.FLOE_DEBUG === "1" && e instanceof Error ? (e.stack ?? e.message) : e instanceof Error ? e.message : String(e)}\n`);
  process.exit(1);
};
process.on("uncaughtException", onEpipe);
process.on("unhandledRejection", onEpipe);

/**
 * JSC sizes its heap's slack by the RAM it believes the machine has, and reads its options once,
 * before any code runs: `run` and `serve` start again (execve, same process id) with
 * BUN_JSC_forceRAMSize set to 64 MiB and BUN_JSC_largeHeapGrowthFactor to 1.75, each unless it is
 * set already, as the service unit sets both (docs/memory.md). Neither is a limit.
 * FLOE_JSC_RAM=<bytes> picks another size; FLOE_JSC_RAM=system keeps the runtime's own sizing.
 */
function smallHeap(command: string | undefined): void {
  if (command !== "run" && command !== "serve") return;
  const env = process.env;
  if (env.FLOE_JSC_RAM === "system" || typeof process.execve !== "function") return;
  // Told 64 MiB, JSC takes the whole process (~80 MiB with the executable's file-backed pages) for a
  // large heap and lets it grow by only 1.24 between collections, which makes every other collection
  // a full one: 1.75 keeps most of the small heap's memory at about the system sizing's CPU.
  if (env.BUN_JSC_forceRAMSize !== undefined && env.BUN_JSC_largeHeapGrowthFactor !== undefined) return;
  const size = env.BUN_JSC_forceRAMSize ?? env.FLOE_JSC_RAM ?? "67108864";
  if (env.BUN_JSC_forceRAMSize === undefined && !/^[1-9]\d*$/.test(size)) {
    process.stderr.write(`floe: FLOE_JSC_RAM=${size}: a number of bytes, or system\n`);
    process.exit(2);
  }
  // A compiled executable's script is inside it (/$bunfs/…) and it applies its own runtime flags;
  // `bun [flags] cli.ts` keeps its flags (--cpu-prof, --smol) and script.
  const compiled = (process.argv[1] ?? "").startsWith("/$bunfs/");
  const args = compiled ? process.argv.slice(2) : [...process.execArgv, ...process.argv.slice(1)];
  const growth = env.BUN_JSC_largeHeapGrowthFactor ?? "1.75";
  try {
    process.execve(process.execPath, [process.execPath, ...args], { ...env, BUN_JSC_forceRAMSize: size, BUN_JSC_largeHeapGrowthFactor: growth });
  } catch (e) {
    // The kernel would not start the executable again (a noexec mount, qemu user emulation without
    // binfmt): floe runs on the runtime's own sizing, and says so instead of Bun's warning that
    // execve is experimental (queued for the next tick; the usual listeners come back after it).
    const listeners = process.listeners("warning");
    process.removeAllListeners("warning");
    setImmediate(() => listeners.forEach((l) => process.on("warning", l)));
    process.stderr.write(`floe: could not restart with the small heap (${(e as { code?: unknown }).code ?? (e as Error).message}): the runtime's own heap sizing is used (FLOE_JSC_RAM=system skips the restart)\n`);
  }
}

const argv = process.argv.slice(2);
// Installed (or symlinked) as `kuiper`: the whole command line is the kuiper grammar.
if ([process.argv0, process.argv[1] ?? ""].some((p) => /(^|\/)kuiper$/.test(p))) {
  import("./lib/cli/kuiper.ts").then((m) => m.kuiperMain(argv)).then((code) => process.exit(code));
} else {
  // Fast path: `--version` answers before any module of the engine loads, through console.log,
  // which writes synchronously without creating the node-style process.stdout stream.
  if (argv[0] === "--version" || argv[0] === "-v" || argv[0] === "version") {
    console.log(`floe ${pkg.version}`);
    process.exit(0);
  }
  smallHeap(argv[0]);
  exitCode(argv).then((code) => process.exit(code));
}
