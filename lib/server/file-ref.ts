/**
 * `file` references in import, upload and schema requests (rest-api.md §11.3): `file:///abs`, a
 * plain path, or an http(s) URL. Local files outside `<data>/uploads` need
 * `basic.allowExternalFileAccess`; URLs are fetched through the private-network guard
 * (net/guard.ts): loopback/private addresses, also behind a redirect, need `basic.enablePrivateNet`.
 */
import { readFile } from "node:fs/promises";
import { isAbsolute, relative, resolve } from "node:path";
import { EngineError, ErrCode } from "../errors.ts";
import { guardedFetch, type NetGuard } from "../net/guard.ts";

/** What a file reference needs from the engine (structural: the Engine is one, without an import cycle). */
export interface FileRefHost {
  readonly config: { readonly basic: { readonly allowExternalFileAccess: boolean } };
  /** The outbound client URLs are fetched through (`basic.enablePrivateNet`). */
  readonly outbound: NetGuard;
  readonly uploadsDir: string;
}

export async function readFileRef(e: FileRefHost, ref: string): Promise<string> {
  if (/^https?:\/\//i.test(ref)) {
    const res = await guardedFetch(ref, { signal: AbortSignal.timeout(300_000) }, e.outbound);
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
