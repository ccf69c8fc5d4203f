/** Payload decompression shared by sources (`decompression`, `compression`): gzip, zstd, zlib, flate. */
import { zlib } from "../value/zlib.ts";
import { EngineError, errorText } from "../errors.ts";

export const DECOMPRESSIONS: ReadonlySet<string> = new Set(["gzip", "zstd", "zlib", "flate"]);

/** Decompresses `b` with `kind` (one of DECOMPRESSIONS); throws EngineError on corrupt input. */
export function decompressBytes(b: Uint8Array, kind: string): Uint8Array {
  try {
    switch (kind) {
      case "gzip":
        return zlib().gunzipSync(b);
      case "zstd":
        return Bun.zstdDecompressSync(b);
      case "zlib":
        return zlib().inflateSync(b);
      case "flate":
        return zlib().inflateRawSync(b);
    }
  } catch (e) {
    throw new EngineError(`fail to decompress: ${errorText(e)}`, undefined, { cause: e });
  }
  return b;
}
