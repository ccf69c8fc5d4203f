/**
 * The `basic` settings pipe mode needs from `etc/kuiper.yaml` (config-and-cli.md §2), with the
 * `KUIPER__BASIC__<KEY>` environment overrides (§5).
 */
import { YAML } from "bun";
import { join } from "node:path";
import { EngineError, ErrCode } from "../errors.ts";
import { localZone, loadLocation, type Zone } from "../expr/time.ts";

export interface BasicConfig {
  readonly timezone: Zone;
  readonly ignoreCase: boolean;
}

function lowerKeys(v: unknown): unknown {
  if (!v || typeof v !== "object" || Array.isArray(v)) return v;
  return Object.fromEntries(Object.entries(v).map(([k, x]) => [k.toLowerCase(), lowerKeys(x)]));
}

export async function loadBasicConfig(etcDir: string | undefined, env: Record<string, string | undefined> = process.env): Promise<BasicConfig> {
  let basic: Record<string, unknown> = {};
  if (etcDir) {
    const file = Bun.file(join(etcDir, "kuiper.yaml"));
    if (await file.exists()) {
      const doc = lowerKeys(YAML.parse(await file.text())) as { basic?: Record<string, unknown> } | null;
      basic = doc?.basic ?? {};
    }
  }
  const tz = env.KUIPER__BASIC__TIMEZONE ?? (typeof basic.timezone === "string" ? basic.timezone : "Local");
  let timezone: Zone;
  try {
    timezone = tz === "Local" ? localZone() : loadLocation(tz);
  } catch (e) {
    throw new EngineError(`invalid basic.timezone ${JSON.stringify(tz)}: ${(e as Error).message}`, ErrCode.confKey);
  }
  const ic = env.KUIPER__BASIC__IGNORECASE ?? basic.ignorecase;
  return { timezone, ignoreCase: ic === true || ic === "true" };
}
