/** Code point sets of Go's regexp as JS class atoms: Perl and POSIX (ASCII) groups, escapes. */

export type Ranges = number[]; // flat [lo, hi, lo, hi, ...]

export const PERL: Record<string, Ranges> = {
  d: [0x30, 0x39],
  s: [0x09, 0x0a, 0x0c, 0x0d, 0x20, 0x20],
  w: [0x30, 0x39, 0x41, 0x5a, 0x5f, 0x5f, 0x61, 0x7a],
};
export const POSIX: Record<string, Ranges> = {
  alnum: [0x30, 0x39, 0x41, 0x5a, 0x61, 0x7a],
  alpha: [0x41, 0x5a, 0x61, 0x7a],
  ascii: [0x00, 0x7f],
  blank: [0x09, 0x09, 0x20, 0x20],
  cntrl: [0x00, 0x1f, 0x7f, 0x7f],
  digit: [0x30, 0x39],
  graph: [0x21, 0x7e],
  lower: [0x61, 0x7a],
  print: [0x20, 0x7e],
  punct: [0x21, 0x2f, 0x3a, 0x40, 0x5b, 0x60, 0x7b, 0x7e],
  space: [0x09, 0x0d, 0x20, 0x20],
  upper: [0x41, 0x5a],
  word: [0x30, 0x39, 0x41, 0x5a, 0x5f, 0x5f, 0x61, 0x7a],
  xdigit: [0x30, 0x39, 0x41, 0x46, 0x61, 0x66],
};

export const MAX_RUNE = 0x10ffff;
const SYNTAX_CHARS = "^$\\.*+?()[]{}|/";

export function isAlnum(c: number): boolean {
  return (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a);
}
export function isOctal(c: number): boolean {
  return c >= 0x30 && c <= 0x37;
}
export function unhex(c: number): number {
  if (c >= 0x30 && c <= 0x39) return c - 0x30;
  if (c >= 0x61 && c <= 0x66) return c - 0x61 + 10;
  if (c >= 0x41 && c <= 0x46) return c - 0x41 + 10;
  return -1;
}

function hexEscape(cp: number): string {
  return `\\u{${cp.toString(16)}}`;
}
/** A code point as a JS pattern atom outside a class. */
export function litSrc(cp: number): string {
  if (cp < 0x80) {
    if (isAlnum(cp)) return String.fromCharCode(cp);
    const c = String.fromCharCode(cp);
    if (SYNTAX_CHARS.includes(c)) return "\\" + c;
    return cp > 0x20 && cp < 0x7f ? c : hexEscape(cp);
  }
  return cp >= 0xd800 && cp <= 0xdfff ? hexEscape(cp) : String.fromCodePoint(cp);
}
/** A code point inside a JS class. */
function classChar(cp: number): string {
  return isAlnum(cp) ? String.fromCharCode(cp) : hexEscape(cp);
}

function normalize(r: Ranges): Ranges {
  const pairs: [number, number][] = [];
  for (let i = 0; i < r.length; i += 2) pairs.push([r[i]!, r[i + 1]!]);
  pairs.sort((a, b) => a[0] - b[0] || b[1] - a[1]);
  const out: Ranges = [];
  for (const [lo, hi] of pairs) {
    const n = out.length;
    if (n && lo <= out[n - 1]! + 1) out[n - 1] = Math.max(out[n - 1]!, hi);
    else out.push(lo, hi);
  }
  return out;
}
export function complement(r: Ranges): Ranges {
  const out: Ranges = [];
  let next = 0;
  for (let i = 0; i < r.length; i += 2) {
    if (next <= r[i]! - 1) out.push(next, r[i]! - 1);
    next = r[i + 1]! + 1;
  }
  if (next <= MAX_RUNE) out.push(next, MAX_RUNE);
  return out;
}
/** Go's simple-fold closure of an ASCII set: the other case, plus ſ (s) and K (Kelvin, k). */
export function foldClosure(r: Ranges): Ranges {
  const out = r.slice();
  for (let i = 0; i < r.length; i += 2) {
    for (let c = r[i]!; c <= r[i + 1]! && c < 0x80; c++) {
      const lower = c | 0x20;
      if (lower >= 0x61 && lower <= 0x7a) {
        out.push(c ^ 0x20, c ^ 0x20);
        if (lower === 0x73) out.push(0x17f, 0x17f);
        if (lower === 0x6b) out.push(0x212a, 0x212a);
      }
    }
  }
  return normalize(out);
}
export function rangeAtoms(r: Ranges, out: string[]): void {
  for (let i = 0; i < r.length; i += 2) {
    const lo = r[i]!;
    const hi = r[i + 1]!;
    out.push(lo === hi ? classChar(lo) : `${classChar(lo)}-${classChar(hi)}`);
  }
}

