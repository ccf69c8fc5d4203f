/** Shared CLI helpers: usage errors (exit 2) and repeated `-o KEY=VALUE` rule options. */

/** Bad command-line usage: exit status 2. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "UsageError";
  }
}

/** `-o KEY=VALUE` / `--option KEY=VALUE` (repeatable): VALUE is JSON when it parses, else a string. */
export function ruleOptions(rawArgs: string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (let i = 0; i < rawArgs.length; i++) {
    const a = rawArgs[i]!;
    let kv: string | undefined;
    if (a === "-o" || a === "--option") kv = rawArgs[++i];
    else if (a.startsWith("--option=")) kv = a.slice(9);
    else if (a.startsWith("-o") && a.length > 2) kv = a.slice(2);
    else continue;
    const eq = kv?.indexOf("=") ?? -1;
    if (kv === undefined || eq <= 0) throw new UsageError(`-o needs KEY=VALUE, got ${JSON.stringify(kv ?? "")}`);
    const key = kv.slice(0, eq);
    const text = kv.slice(eq + 1);
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      value = text;
    }
    setPath(out, key, value);
  }
  return out;
}

/** `planOptimizeStrategy.enableIncrementalWindow=true` sets a nested option. */
function setPath(o: Record<string, unknown>, key: string, value: unknown): void {
  const parts = key.split(".");
  let cur = o;
  for (const p of parts.slice(0, -1)) {
    if (typeof cur[p] !== "object" || cur[p] === null) cur[p] = {};
    cur = cur[p] as Record<string, unknown>;
  }
  cur[parts[parts.length - 1]!] = value;
}

/** The text of a `--streams FILE` (undefined without the flag); an unreadable file is a usage error. */
export async function readStreamsFile(path: string | undefined): Promise<string | undefined> {
  if (!path) return undefined;
  return Bun.file(path)
    .text()
    .catch((e: unknown) => {
      throw new UsageError(`cannot read streams ${path}: ${(e as Error).message}`);
    });
}
