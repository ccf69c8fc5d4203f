#!/usr/bin/env bun
/**
 * floe's command line (citty). Maps outcomes to exit codes and is the only place that calls
 * process.exit — after every command has flushed its output.
 */
import pkg from "./package.json" with { type: "json" };

const argv = process.argv.slice(2);
// Fast path: `--version` answers before any module of the engine loads.
if (argv[0] === "--version" || argv[0] === "-v" || argv[0] === "version") {
  process.stdout.write(`floe ${pkg.version}\n`);
  process.exit(0);
}

const { defineCommand, runCommand, showUsage } = await import("citty");
await import("./lib/functions/index.ts");
const { UsageError } = await import("./lib/cli/options.ts");

const main = defineCommand({
  meta: { name: "floe", version: pkg.version, description: "Edge stream processing with eKuiper's SQL, rules and API" },
  subCommands: {
    run: () => import("./lib/cli/run.ts").then((m) => m.default),
    test: () => import("./lib/cli/test.ts").then((m) => m.default),
    check: () => import("./lib/cli/check.ts").then((m) => m.default),
  },
});

async function exitCode(): Promise<number> {
  if (argv.length === 0 || argv[0] === "--help" || argv[0] === "-h") {
    await showUsage(main);
    return argv.length === 0 ? 2 : 0;
  }
  try {
    if (argv.includes("--help") || argv.includes("-h")) {
      const sub = await (main.subCommands as Record<string, () => Promise<never>>)[argv[0]!]?.();
      await showUsage(sub ?? main, main);
      return 0;
    }
    const { result } = await runCommand(main, { rawArgs: argv });
    return typeof result === "number" ? result : 0;
  } catch (e) {
    if (e instanceof UsageError || (e as { code?: string }).code?.startsWith?.("E_")) {
      process.stderr.write(`floe: ${(e as Error).message}\n`);
      return 2;
    }
    process.stderr.write(`floe: ${(e as Error).stack ?? e}\n`);
    return 1;
  }
}

process.exit(await exitCode());
