/** Go `time.ParseDuration` with its exact error texts. */
import { RowError } from "../errors.ts";

const UNITS: Record<string, bigint> = {
  ns: 1n,
  us: 1_000n,
  "\u00b5s": 1_000n,
  "\u03bcs": 1_000n,
  ms: 1_000_000n,
  s: 1_000_000_000n,
  m: 60_000_000_000n,
  h: 3_600_000_000_000n,
};
const LIMIT = 1n << 63n;
const enc = new TextEncoder();

/** Go's `time.quote`: ASCII printable as is (escaping `"` and `\`), other bytes as `\xNN`. */
function quote(s: string): string {
  let b = '"';
  for (const ch of s) {
    const c = ch.codePointAt(0)!;
    if (c >= 0x80 || c < 0x20) {
      for (const byte of enc.encode(ch)) b += "\\x" + byte.toString(16).padStart(2, "0");
    } else {
      if (ch === '"' || ch === "\\") b += "\\";
      b += ch;
    }
  }
  return b + '"';
}

function isDigit(c: string | undefined): boolean {
  return c !== undefined && c >= "0" && c <= "9";
}

/** Parses `[-+]?([0-9]*(\.[0-9]*)?[a-z]+)+` into nanoseconds; throws RowError with Go's text. */
export function parseGoDuration(orig: string): bigint {
  const invalid = () => new RowError(`time: invalid duration ${quote(orig)}`);
  let s = orig;
  let neg = false;
  if (s[0] === "-" || s[0] === "+") {
    neg = s[0] === "-";
    s = s.slice(1);
  }
  if (s === "0") return 0n;
  if (s === "") throw invalid();
  let d = 0n;
  while (s !== "") {
    if (!(s[0] === "." || isDigit(s[0]))) throw invalid();
    let i = 0;
    let v = 0n;
    for (; isDigit(s[i]); i++) {
      if (v > LIMIT / 10n) throw invalid();
      v = v * 10n + BigInt(s.charCodeAt(i) - 48);
      if (v > LIMIT) throw invalid();
    }
    const pre = i > 0;
    s = s.slice(i);
    let f = 0n;
    let scale = 1;
    let post = false;
    if (s[0] === ".") {
      s = s.slice(1);
      let overflow = false;
      let k = 0;
      for (; isDigit(s[k]); k++) {
        if (overflow) continue;
        if (f > (LIMIT - 1n) / 10n) {
          overflow = true;
          continue;
        }
        const y = f * 10n + BigInt(s.charCodeAt(k) - 48);
        if (y > LIMIT) {
          overflow = true;
          continue;
        }
        f = y;
        scale *= 10;
      }
      post = k > 0;
      s = s.slice(k);
    }
    if (!pre && !post) throw invalid();
    let u = 0;
    while (u < s.length && s[u] !== "." && !isDigit(s[u])) u++;
    if (u === 0) throw new RowError(`time: missing unit in duration ${quote(orig)}`);
    const unitName = s.slice(0, u);
    s = s.slice(u);
    const unit = UNITS[unitName];
    if (unit === undefined) throw new RowError(`time: unknown unit ${quote(unitName)} in duration ${quote(orig)}`);
    if (v > LIMIT / unit) throw invalid();
    v *= unit;
    if (f > 0n) {
      // Go computes the fraction in float64, nanosecond-accurate up to hours.
      v += BigInt(Math.trunc(Number(f) * (Number(unit) / scale)));
      if (v > LIMIT) throw invalid();
    }
    d += v;
    if (d > LIMIT) throw invalid();
  }
  if (neg) return -d;
  if (d > LIMIT - 1n) throw invalid();
  return d;
}

/** A Go duration string in milliseconds, fractional below 1 ms (Go keeps ns); throws like `parseGoDuration`. */
export function goDurationMs(text: string): number {
  return Number(parseGoDuration(text)) / 1e6;
}
