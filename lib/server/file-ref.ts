/**
 * `file` references in import, upload and schema requests (rest-api.md §11.3): `file:///abs`, a
 * plain path, or an http(s) URL. Local files outside `<data>/uploads` need
 * `basic.allowExternalFileAccess`; URLs reaching loopback/private addresses need
 * `basic.enablePrivateNet`.
 */
import { lookup } from "node:dns/promises";
import { readFile } from "node:fs/promises";
import { isIP } from "node:net";
import { isAbsolute, relative, resolve } from "node:path";
import { EngineError, ErrCode } from "../errors.ts";
import { isPrivateIp } from "../io/http.ts";
import type { Engine } from "./engine.ts";

export async function readFileRef(e: Engine, ref: string): Promise<string> {
  if (/^https?:\/\//i.test(ref)) {
    const url = new URL(ref);
    const host = url.hostname.replace(/^\[|\]$/g, "");
    const ip = isIP(host) ? host : (await lookup(host)).address;
    if (!e.config.basic.enablePrivateNet && isPrivateIp(ip)) throw new EngineError(`ip ${ip} is in internal network`, ErrCode.undefined);
    const res = await fetch(url, { signal: AbortSignal.timeout(300_000) });
    if (!res.ok) throw new EngineError(`fail to download file ${ref}: ${res.status} ${res.statusText}`, ErrCode.undefined);
    return await res.text();
  }
  const path = resolve(ref.startsWith("file://") ? ref.slice(7) : ref);
  if (!e.config.basic.allowExternalFileAccess) {
    const rel = relative(e.uploadsDir, path);
    if (rel.startsWith("..") || isAbsolute(rel)) throw new EngineError(`file ${ref} is not allowed: only files in ${e.uploadsDir} can be read (basic.allowExternalFileAccess is false)`, ErrCode.undefined);
  }
  try {
    return await readFile(path, "utf8");
  } catch (err) {
    throw new EngineError(`open ${path}: no such file or directory`, ErrCode.undefined, { cause: err });
  }
}
