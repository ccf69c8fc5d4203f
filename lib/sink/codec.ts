/**
 * The byte transforms after encoding (rules-and-sinks.md §3, `compression`, `encryption`): gzip,
 * zstd, zlib, flate; AES-GCM (nonce prefixed, tag appended) or AES-CFB (IV prefixed) with the
 * `basic.aesKey`.
 */
import { createCipheriv, randomBytes, type CipherGCM } from "node:crypto";
import { zlib } from "../value/zlib.ts";
import { EngineError } from "../errors.ts";

export type Transform = (b: Uint8Array) => Uint8Array;
const utf8 = new TextEncoder();

export function compressor(kind: string): Transform | null {
  switch (kind) {
    case "":
      return null;
    case "gzip":
      return (b) => Bun.gzipSync(b as Uint8Array<ArrayBuffer>);
    case "zstd":
      return (b) => Bun.zstdCompressSync(b as Uint8Array<ArrayBuffer>);
    case "zlib":
      return (b) => zlib().deflateSync(b);
    case "flate":
      return (b) => zlib().deflateRawSync(b);
  }
  throw new EngineError(`unsupported compressor: ${kind}`);
}

export function encryptor(kind: string, key: string | undefined, props: Record<string, unknown> | undefined): Transform | null {
  if (!kind) return null;
  if (kind !== "aes") throw new EngineError(`unsupported encryptor: ${kind}`);
  if (!key) throw new EngineError("AES Key is not defined");
  const k = Buffer.from(key, "base64");
  const mode = typeof props?.mode === "string" ? props.mode.toLowerCase() : "gcm";
  const fixedIv = typeof props?.iv === "string" ? Buffer.from(props.iv, "base64") : undefined;
  const aad = typeof props?.aad === "string" ? Buffer.from(props.aad, "base64") : undefined;
  const bits = k.length * 8;
  return (b) => {
    if (mode === "cfb") {
      const iv = fixedIv ?? randomBytes(16);
      const c = createCipheriv(`aes-${bits}-cfb`, k, iv);
      return Buffer.concat([iv, c.update(b), c.final()]);
    }
    const nonce = fixedIv ?? randomBytes(12);
    const c = createCipheriv(`aes-${bits}-gcm`, k, nonce) as CipherGCM;
    if (aad) c.setAAD(aad);
    const body = Buffer.concat([c.update(b), c.final(), c.getAuthTag()]);
    return Buffer.concat([nonce, body]);
  };
}

export function bytesOf(p: string | Uint8Array): Uint8Array {
  return typeof p === "string" ? utf8.encode(p) : p;
}
