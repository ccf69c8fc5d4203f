/**
 * Text primitives with Go's meaning: UTF-8 byte offsets and lengths, Go `unicode.IsSpace`,
 * per-code-point simple case mapping (functions §8.1, §8.2, §8.5).
 */

/** UTF-8 length of `s.slice(0, end)` (a lone surrogate counts as U+FFFD, 3 bytes, as Go decodes it). */
export function utf8Length(s: string, end: number = s.length): number {
  let n = 0;
  for (let i = 0; i < end; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else if (c >= 0xd800 && c <= 0xdbff && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      n += 4;
      i++;
    } else n += 3;
  }
  return n;
}

/** Number of code points. */
export function codePointCount(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00) i++;
    n++;
  }
  return n;
}

function isAscii(s: string): boolean {
  for (let i = 0; i < s.length; i++) if (s.charCodeAt(i) >= 0x80) return false;
  return true;
}

const encoder = new TextEncoder();

/**
 * `string(b[start:end])` of Go for the UTF-8 bytes b of s, clamped to the byte length. A cut
 * multi-byte sequence decodes as one U+FFFD per invalid byte, as Go's JSON encoder prints it.
 */
export function sliceUtf8(s: string, start: number, end: number): string {
  if (isAscii(s)) return s.slice(start, end);
  const b = encoder.encode(s);
  return decodeUtf8Go(b.subarray(Math.min(start, b.length), Math.min(end, b.length)));
}

/** UTF-8 decoding with Go's error rule: each byte of an invalid sequence becomes U+FFFD. */
export function decodeUtf8Go(b: Uint8Array): string {
  let out = "";
  let i = 0;
  while (i < b.length) {
    const c = b[i]!;
    if (c < 0x80) {
      out += String.fromCharCode(c);
      i++;
      continue;
    }
    let need = 0;
    let cp = 0;
    let min = 0;
    if (c >= 0xc2 && c <= 0xdf) (need = 1), (cp = c & 0x1f), (min = 0x80);
    else if (c >= 0xe0 && c <= 0xef) (need = 2), (cp = c & 0x0f), (min = 0x800);
    else if (c >= 0xf0 && c <= 0xf4) (need = 3), (cp = c & 0x07), (min = 0x10000);
    let ok = need > 0;
    for (let k = 1; ok && k <= need; k++) {
      const cc = b[i + k];
      if (cc === undefined || (cc & 0xc0) !== 0x80) ok = false;
      else cp = (cp << 6) | (cc & 0x3f);
    }
    if (ok && cp >= min && cp <= 0x10ffff && !(cp >= 0xd800 && cp <= 0xdfff)) {
      out += String.fromCodePoint(cp);
      i += need + 1;
    } else {
      out += "\ufffd";
      i++;
    }
  }
  return out;
}

/** Byte offset (UTF-8) of the first occurrence of `x` in `s`, or -1. */
export function utf8IndexOf(s: string, x: string): number {
  const i = s.indexOf(x);
  return i <= 0 ? i : utf8Length(s, i);
}

/** Go `unicode.IsSpace`. */
export function isGoSpace(c: number): boolean {
  if (c <= 0xff) return (c >= 0x09 && c <= 0x0d) || c === 0x20 || c === 0x85 || c === 0xa0;
  return (
    c === 0x1680 ||
    (c >= 0x2000 && c <= 0x200a) ||
    c === 0x2028 ||
    c === 0x2029 ||
    c === 0x202f ||
    c === 0x205f ||
    c === 0x3000
  );
}

export function trimLeftGo(s: string): string {
  let i = 0;
  while (i < s.length && isGoSpace(s.charCodeAt(i))) i++;
  return i === 0 ? s : s.slice(i);
}

export function trimRightGo(s: string): string {
  let j = s.length;
  while (j > 0 && isGoSpace(s.charCodeAt(j - 1))) j--;
  return j === s.length ? s : s.slice(0, j);
}

// Simple (one-to-one) mappings where JS's full mapping of a lone code point is not one code point.
const LOWER_SPECIAL = new Map<number, number>([[0x130, 0x69]]);
const UPPER_SPECIAL = new Map<number, number>([
  [0x1fb3, 0x1fbc],
  [0x1fc3, 0x1fcc],
  [0x1ff3, 0x1ffc],
]);
for (let c = 0; c < 8; c++) {
  UPPER_SPECIAL.set(0x1f80 + c, 0x1f88 + c);
  UPPER_SPECIAL.set(0x1f90 + c, 0x1f98 + c);
  UPPER_SPECIAL.set(0x1fa0 + c, 0x1fa8 + c);
}

function mapCodePoint(ch: string, upper: boolean): string {
  const m = upper ? ch.toUpperCase() : ch.toLowerCase();
  if (m === ch) return ch;
  const first = m.codePointAt(0)!;
  if (m.length === (first > 0xffff ? 2 : 1)) return m;
  const special = (upper ? UPPER_SPECIAL : LOWER_SPECIAL).get(ch.codePointAt(0)!);
  return special === undefined ? ch : String.fromCodePoint(special);
}

/** Go `strings.ToLower`/`ToUpper`: each code point mapped alone with the simple mapping. */
export function caseMapGo(s: string, upper: boolean): string {
  if (isAscii(s)) return upper ? s.toUpperCase() : s.toLowerCase();
  let out = "";
  for (const ch of s) out += mapCodePoint(ch, upper);
  return out;
}

/** Code points in reverse order. */
export function reverseCodePoints(s: string): string {
  if (isAscii(s)) {
    let out = "";
    for (let i = s.length - 1; i >= 0; i--) out += s[i];
    return out;
  }
  return Array.from(s).reverse().join("");
}
