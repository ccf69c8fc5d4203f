/**
 * The `basic` settings pipe mode needs from `etc/kuiper.yaml` (config-and-cli.md §2), with the
 * `KUIPER__BASIC__<KEY>` environment overrides (§5). The full loader is lib/config.
 */
import { setCompileLimits } from "../value/compile-budget.ts";
import { loadKuiperConfig, type BasicSettings } from "./kuiper.ts";
import type { Zone } from "../value/time.ts";

export interface BasicConfig {
  readonly timezone: Zone;
  readonly ignoreCase: boolean;
  readonly enablePrivateNet: boolean;
  /** `source.httpServerIp`/`httpServerPort`: the data server of httppush/websocket/sse endpoints; who may open its websockets. */
  readonly dataServer: { readonly hostname: string; readonly port: number; readonly origins: Pick<BasicSettings, "allowedOrigins" | "allowedHosts"> };
}

export async function loadBasicConfig(etcDir: string | undefined, env: Record<string, string | undefined> = process.env): Promise<BasicConfig> {
  const { basic, source } = await loadKuiperConfig(etcDir, env);
  // Pipe mode compiles the user's own files, under the same budget as the daemon's uploads.
  setCompileLimits(basic.compileLimits);
  return {
    timezone: basic.timezone,
    ignoreCase: basic.ignoreCase,
    enablePrivateNet: basic.enablePrivateNet,
    dataServer: { hostname: source.httpServerIp, port: source.httpServerPort, origins: basic },
  };
}
