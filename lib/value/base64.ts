/**
 * Standard padded base64 for the short payloads of the data path (W3's `21.4`): loops here beat
 * the runtime's native calls, whose fixed cost per call is several times the work for a few bytes
 * (bench/notes.md, W3). Longer values, and every text the fast path does not take, go native.
 */

const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const DECODE = new Int8Array(128).fill(-1);
for (let i = 0; i < 64; i++) DECODE[ALPHABET.charCodeAt(i)] = i;
/** Two output characters per 12 bits. */
const PAIRS: string[] = [];
for (let i = 0; i < 4096; i++) PAIRS.push(ALPHABET[i >> 6]! + ALPHABET[i & 63]!);

/** Values up to this many bytes are encoded here; longer ones natively. */
export const SHORT_BASE64_BYTES = 64;

/** Standard padded base64 of `b` (meant for b.length ≤ SHORT_BASE64_BYTES). */
export function base64Short(b: Uint8Array): string {
  const n = b.length;
  let s = "";
  let i = 0;
  for (; i + 2 < n; i += 3) {
    const v = (b[i]! << 16) | (b[i + 1]! << 8) | b[i + 2]!;
    s += PAIRS[v >> 12]! + PAIRS[v & 4095]!;
  }
  if (i + 1 === n) s += PAIRS[b[i]! << 4]! + "==";
  else if (i + 2 === n) {
    const v = (b[i]! << 10) | (b[i + 1]! << 2);
    s += PAIRS[v >> 6]! + ALPHABET[v & 63]! + "=";
  }
  return s;
}

/** Texts up to this length are decoded here. */
const SHORT_TEXT = 88;

/**
 * `Buffer.from(s, "base64")`, byte for byte and as a Buffer (the bytes an MQTT payload would be).
 * A short canonical text (length a multiple of 4, the standard alphabet, `=` only as the last one
 * or two characters) is decoded here; anything else — whitespace, the URL alphabet, missing or
 * misplaced padding, other characters — by Buffer, whose leniency is the contract.
 */
export function bufferFromBase64(s: string): Buffer {
  const n = s.length;
  if (n === 0 || n > SHORT_TEXT || (n & 3) !== 0) return Buffer.from(s, "base64");
  const pad = s.charCodeAt(n - 1) !== 61 ? 0 : s.charCodeAt(n - 2) === 61 ? 2 : 1;
  const full = pad ? n - 4 : n;
  // Checked before the allocation: a text the loop would decline costs no Buffer.
  let bad = 0;
  for (let i = 0; i < full; i++) {
    const c = s.charCodeAt(i);
    bad |= c > 127 ? -1 : DECODE[c]!;
  }
  if (pad) {
    const c0 = s.charCodeAt(full);
    const c1 = s.charCodeAt(full + 1);
    bad |= (c0 > 127 ? -1 : DECODE[c0]!) | (c1 > 127 ? -1 : DECODE[c1]!);
    if (pad === 1) {
      const c2 = s.charCodeAt(full + 2);
      bad |= c2 > 127 ? -1 : DECODE[c2]!;
    }
  }
  if (bad < 0) return Buffer.from(s, "base64");
  const out = Buffer.allocUnsafe((n >> 2) * 3 - pad);
  let o = 0;
  let i = 0;
  for (; i < full; i += 4) {
    const v = (DECODE[s.charCodeAt(i)]! << 18) | (DECODE[s.charCodeAt(i + 1)]! << 12) | (DECODE[s.charCodeAt(i + 2)]! << 6) | DECODE[s.charCodeAt(i + 3)]!;
    out[o++] = v >> 16;
    out[o++] = (v >> 8) & 255;
    out[o++] = v & 255;
  }
  let canonical = true;
  if (pad) {
    // Non-zero trailing bits are ignored, as Buffer ignores them.
    const v = (DECODE[s.charCodeAt(i)]! << 18) | (DECODE[s.charCodeAt(i + 1)]! << 12) | (pad === 1 ? DECODE[s.charCodeAt(i + 2)]! << 6 : 0);
    out[o++] = v >> 16;
    if (pad === 1) out[o] = (v >> 8) & 255;
    canonical = (v & (pad === 1 ? 255 : 65535)) === 0;
  }
  if (canonical) (lastBytes = out), (lastText = s);
  return out;
}

/**
 * The bytes bufferFromBase64 returned last, when its text is exactly their standard base64 (no
 * stray trailing bits): a replay payload written back as base64 (W3's `self`) reuses that text.
 * Byte values are never written to in place, so the pair stays true while the bytes live.
 */
let lastBytes: Uint8Array | null = null;
let lastText = "";

/** Standard padded base64 of `b` when it is the last canonical text decoded here, else undefined. */
export function knownBase64(b: Uint8Array): string | undefined {
  return b === lastBytes ? lastText : undefined;
}
