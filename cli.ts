#!/usr/bin/env bun
/**
 * floe's command line (citty). Maps outcomes to exit codes and is the only place that calls
 * process.exit — after every command has flushed its output.
 */
import pkg from "./package.json" with { type: "json" };

async function exitCode(argv: string[]): Promise<number> {
  const { defineCommand, runCommand, showUsage } = await import("citty");
  const { UsageError } = await import("./lib/cli/options.ts");
  type Command = import("citty").CommandDef<import("citty").ArgsDef>;
  const load = (p: Promise<{ default: unknown }>) => p.then((m) => m.default as Command);
  const subCommands: Record<string, () => Promise<Command>> = {
    run: () => load(import("./lib/cli/run.ts")),
    test: () => load(import("./lib/cli/test.ts")),
    check: () => load(import("./lib/cli/check.ts")),
    serve: () => load(import("./lib/cli/serve.ts")),
  };
  const kuiper = await import("./lib/cli/kuiper.ts");
  for (const v of kuiper.KUIPER_VERBS) subCommands[v] = async () => kuiper.verbCommand(v) as Command;
  const main = defineCommand({
    meta: { name: "floe", version: pkg.version, description: "Edge stream processing with eKuiper's SQL, rules and API" },
    subCommands,
  });
  if (argv.length === 0 || argv[0] === "--help" || argv[0] === "-h") {
    await showUsage(main);
    return argv.length === 0 ? 2 : 0;
  }
  try {
    const name = argv[0]!;
    if (argv.includes("--help") || argv.includes("-h")) {
      const sub = subCommands[name];
      await showUsage(sub ? await sub() : main, main);
      return 0;
    }
    const sub = subCommands[name];
    if (!sub) throw new UsageError(`unknown command ${JSON.stringify(name)} (floe --help lists them)`);
    // The subcommand runs directly: citty drops a subcommand's result, which carries the exit code.
    const { result } = await runCommand(await sub(), { rawArgs: argv.slice(1) });
    return typeof result === "number" ? result : 0;
  } catch (e) {
    if (e instanceof UsageError || String((e as { code?: unknown }).code ?? "").startsWith("E_")) {
      process.stderr.write(`floe: ${(e as Error).message}\n`);
      return 2;
    }
    process.stderr.write(`floe: ${(e as Error).stack ?? e}\n`);
    return 1;
  }
}

const argv = process.argv.slice(2);
// Installed (or symlinked) as `kuiper`: the whole command line is the kuiper grammar.
if ([process.argv0, process.argv[1] ?? ""].some((p) => /(^|\/)kuiper$/.test(p))) {
  import("./lib/cli/kuiper.ts").then((m) => m.kuiperMain(argv)).then((code) => process.exit(code));
} else {
  // Fast path: `--version` answers before any module of the engine loads.
  if (argv[0] === "--version" || argv[0] === "-v" || argv[0] === "version") {
    process.stdout.write(`floe ${pkg.version}\n`);
    process.exit(0);
  }
  exitCode(argv).then((code) => process.exit(code));
}
