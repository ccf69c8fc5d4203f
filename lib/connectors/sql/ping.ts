/**
 * The SQL connectivity check (rest-api.md §13): runs `SELECT 1` (5 s); socket errors in Go's words
 * (value/go-net-error.ts).
 */
import { ErrCode, errorText } from "../../errors.ts";
import { openSql } from "../../net/brokers.ts";
import { goNetErrorText } from "../../value/go-net-error.ts";
import type { PingFailure } from "../spec.ts";
import type { DbUrl } from "./db.ts";

const PROBE_MS = 5000;

export async function pingSql(props: Record<string, unknown>): Promise<PingFailure | undefined> {
  // The SQL client loads with the first sql connector or check, not with the daemon (memory).
  const { dbUrlProp, parseDbUrl } = await import("./db.ts");
  let url: DbUrl;
  try {
    url = parseDbUrl(dbUrlProp(props));
  } catch (e) {
    return { code: ErrCode.undefined, message: errorText(e) };
  }
  const db = openSql(url.options);
  const target = url.dialect === "sqlite" ? undefined : new URL(String(url.options.url));
  try {
    const answered = await Promise.race([db.unsafe("SELECT 1").then(() => true), Bun.sleep(PROBE_MS).then(() => false)]);
    return answered ? undefined : { code: ErrCode.io, message: `${url.display}: i/o timeout` };
  } catch (e) {
    const port = Number(target?.port) || (url.dialect === "postgres" ? 5432 : 3306);
    return { code: ErrCode.io, message: (target && goNetErrorText(e, { host: target.hostname, port })) || errorText(e) };
  } finally {
    await db.close({ timeout: 0 }).catch(() => {});
  }
}
