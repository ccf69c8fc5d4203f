/**
 * Installation roots (config-and-cli.md §1): `etc`, `data`, `log`, `plugins` under the base dir
 * (`KuiperBaseKey` or the working directory, then its parents), or the absolute package layout.
 * Flags `--etc/--data/--log` win in both modes. floe differs in one way: a missing etc dir means
 * the built-in defaults instead of a fatal error, and a missing data dir is created.
 */
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";

export interface Paths {
  /** undefined: no etc directory, built-in defaults. */
  readonly etc: string | undefined;
  readonly data: string;
  readonly log: string;
}

export interface PathFlags {
  loadFileType?: string;
  etc?: string;
  data?: string;
  log?: string;
}

/**
 * `name` in `base` or one of its parents, never in the filesystem root: the host's `/etc` (or `/data`,
 * `/log`) is not an installation of floe, and reading `/etc/kuiper.yaml` by accident is a surprise.
 */
export function findUp(base: string, name: string): string | undefined {
  let dir = resolve(base);
  for (;;) {
    const up = dirname(dir);
    if (up === dir) return undefined;
    const p = join(dir, name);
    if (existsSync(p)) return p;
    dir = up;
  }
}

export function resolvePaths(flags: PathFlags, env: Record<string, string | undefined> = process.env, cwd = process.cwd()): Paths {
  const absolute = flags.loadFileType === "absolute";
  const base = env.KuiperBaseKey || cwd;
  const etc = flags.etc ? resolve(cwd, flags.etc) : absolute ? "/etc/kuiper" : findUp(base, "etc");
  const data = flags.data ? resolve(cwd, flags.data) : absolute ? "/var/lib/kuiper/data" : (findUp(base, "data") ?? join(resolve(base), "data"));
  const log = flags.log ? resolve(cwd, flags.log) : absolute ? "/var/log/kuiper" : (findUp(base, "log") ?? join(resolve(base), "log"));
  return { etc: etc && existsSync(etc) ? etc : undefined, data, log };
}

/** Creates the data sub-directories eKuiper creates at startup (config-and-cli.md §6.1). */
export function prepareDataDir(data: string): void {
  for (const d of ["uploads", "sources", "sinks", "functions", "services", "services/schemas", "connections"]) mkdirSync(join(data, d), { recursive: true });
  const conn = join(data, "connections", "connection.yaml");
  if (!existsSync(conn)) writeFileSync(conn, "");
}
