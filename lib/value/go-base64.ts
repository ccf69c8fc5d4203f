/**
 * Go's `base64.StdEncoding` (padded, CR/LF ignored, non-zero trailing bits accepted), with its
 * error `illegal base64 data at input byte <n>` (n counts UTF-8 bytes of the input).
 */
import { RowError } from "../errors.ts";
import { base64Short, knownBase64, SHORT_BASE64_BYTES } from "./base64.ts";

const DECODE = new Int16Array(256).fill(-1);
{
  const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  for (let i = 0; i < 64; i++) DECODE[alphabet.charCodeAt(i)] = i;
}
const PAD = 0x3d;

function corrupt(at: number): RowError {
  return new RowError(`illegal base64 data at input byte ${at}`);
}

const utf8 = new TextEncoder();

/** Decodes `s` like Go's `StdEncoding.DecodeString`; throws RowError on malformed input. */
export function decodeBase64Go(s: string): Uint8Array {
  const src = utf8.encode(s);
  const n = src.length;
  const out = new Uint8Array(Math.floor(n / 4) * 3 + 3);
  let o = 0;
  let si = 0;
  const buf = [0, 0, 0, 0];
  // One Go `decodeQuantum` per iteration.
  while (si < n) {
    let dlen = 4;
    let trailing = -1;
    let j = 0;
    for (; j < 4; j++) {
      if (si === n) {
        if (j === 0) return out.subarray(0, o);
        throw corrupt(si - j);
      }
      const c = src[si]!;
      si++;
      const d = DECODE[c]!;
      if (d >= 0) {
        buf[j] = d;
        continue;
      }
      if (c === 0x0a || c === 0x0d) {
        j--;
        continue;
      }
      if (c !== PAD) throw corrupt(si - 1);
      if (j < 2) throw corrupt(si - 1);
      if (j === 2) {
        while (si < n && (src[si] === 0x0a || src[si] === 0x0d)) si++;
        if (si === n) throw corrupt(n);
        if (src[si] !== PAD) throw corrupt(si - 1);
        si++;
      }
      while (si < n && (src[si] === 0x0a || src[si] === 0x0d)) si++;
      if (si < n) trailing = si;
      dlen = j;
      break;
    }
    for (let k = dlen; k < 4; k++) buf[k] = 0;
    const val = (buf[0]! << 18) | (buf[1]! << 12) | (buf[2]! << 6) | buf[3]!;
    if (dlen >= 2) out[o++] = (val >> 16) & 0xff;
    if (dlen >= 3) out[o++] = (val >> 8) & 0xff;
    if (dlen === 4) out[o++] = val & 0xff;
    if (trailing >= 0) throw corrupt(trailing);
  }
  return out.subarray(0, o);
}

type WithBase64 = Uint8Array & { toBase64?: () => string };

/**
 * Standard padded base64 of bytes: short values in a loop (base64.ts), longer ones with the
 * runtime's native `toBase64` where it has one (about 3× a Buffer view's `toString("base64")` in
 * Bun, which also materialises the array's ArrayBuffer).
 */
export function encodeBase64(b: Uint8Array): string {
  const known = knownBase64(b);
  if (known !== undefined) return known;
  if (b.length <= SHORT_BASE64_BYTES) return base64Short(b);
  const w = b as WithBase64;
  return w.toBase64 ? w.toBase64() : Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString("base64");
}
