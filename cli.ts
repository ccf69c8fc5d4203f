#!/usr/bin/env bun
/**
 * floe's command line (citty). Maps outcomes to exit codes and is the only place that calls
 * process.exit — after every command has flushed its output.
 */
import pkg from "./package.json" with { type: "json" };

async function exitCode(argv: string[]): Promise<number> {
  const { defineCommand, runCommand, showUsage } = await import("citty");
  await import("./lib/functions/index.ts");
  const { UsageError } = await import("./lib/cli/options.ts");
  const subCommands = {
    run: () => import("./lib/cli/run.ts").then((m) => m.default),
    test: () => import("./lib/cli/test.ts").then((m) => m.default),
    check: () => import("./lib/cli/check.ts").then((m) => m.default),
  };
  const main = defineCommand({
    meta: { name: "floe", version: pkg.version, description: "Edge stream processing with eKuiper's SQL, rules and API" },
    subCommands,
  });
  if (argv.length === 0 || argv[0] === "--help" || argv[0] === "-h") {
    await showUsage(main);
    return argv.length === 0 ? 2 : 0;
  }
  try {
    const name = argv[0] as keyof typeof subCommands;
    if (argv.includes("--help") || argv.includes("-h")) {
      await showUsage(subCommands[name] ? await subCommands[name]() : main, main);
      return 0;
    }
    if (!subCommands[name]) throw new UsageError(`unknown command ${JSON.stringify(argv[0])} (floe --help lists them)`);
    // The subcommand runs directly: citty drops a subcommand's result, which carries the exit code.
    const { result } = await runCommand(await subCommands[name](), { rawArgs: argv.slice(1) });
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
// Fast path: `--version` answers before any module of the engine loads.
if (argv[0] === "--version" || argv[0] === "-v" || argv[0] === "version") {
  process.stdout.write(`floe ${pkg.version}\n`);
  process.exit(0);
}
exitCode(argv).then((code) => process.exit(code));
