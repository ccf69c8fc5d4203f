/**
 * `format(x, d [, locale])` (functions §8.7): the exact binary value rounded half-to-even to `d`
 * decimals (Go's `%.*f`), then, with a locale, localised the way golang.org/x/text prints it.
 */
import { RowError } from "../errors.ts";
import {
  CLASSES,
  COUNTRIES,
  KNOWN_LANGUAGES,
  LANGUAGE_ALIASES,
  LANGUAGES,
  M49,
  SCRIPTS,
  type NumberClass,
} from "./format-locales.ts";

const f64 = new DataView(new ArrayBuffer(8));

/** Digits of |x| rounded half-to-even at `d` decimals: [integer digits, fraction digits]. */
function roundedDigits(x: number, d: number): [string, string] {
  const a = Math.abs(x);
  if (a === 0) return ["0", "0".repeat(d)];
  f64.setFloat64(0, a);
  const hi = f64.getUint32(0);
  const bexp = (hi >>> 20) & 0x7ff;
  let mant = (BigInt(hi & 0xfffff) << 32n) | BigInt(f64.getUint32(4));
  let e = -1074;
  if (bexp !== 0) {
    mant |= 1n << 52n;
    e = bexp - 1075;
  }
  const scale = 10n ** BigInt(d);
  let q: bigint;
  if (e >= 0) q = (mant << BigInt(e)) * scale;
  else {
    const num = mant * scale;
    const sh = BigInt(-e);
    q = num >> sh;
    const rem = num - (q << sh);
    const half = 1n << (sh - 1n);
    if (rem > half || (rem === half && (q & 1n) === 1n)) q++;
  }
  let digits = q.toString();
  if (digits.length <= d) digits = "0".repeat(d - digits.length + 1) + digits;
  return [digits.slice(0, digits.length - d), digits.slice(digits.length - d)];
}

/** Go `fmt.Sprintf("%.*f", d, x)`. */
export function formatFixed(x: number, d: number): string {
  if (Number.isNaN(x)) return "NaN";
  if (!Number.isFinite(x)) return x > 0 ? "+Inf" : "-Inf";
  const [int, frac] = roundedDigits(x, d);
  const sign = x < 0 || Object.is(x, -0) ? "-" : "";
  return sign + int + (d > 0 ? "." + frac : "");
}

// ---------------------------------------------------------------------------------------------
// Locales

let knownBits: Uint8Array | undefined;
let countrySet: Set<string> | undefined;
let m49Map: Map<string, string> | undefined;
let scriptSet: Set<string> | undefined;

function knownLanguage(lang: string): boolean {
  knownBits ??= Uint8Array.from(atob(KNOWN_LANGUAGES), (c) => c.charCodeAt(0));
  let i = 0;
  for (let k = 0; k < lang.length; k++) i = i * 26 + (lang.charCodeAt(k) - 0x61);
  if (lang.length === 3) i += 676;
  return (knownBits[i >> 3]! & (1 << (i & 7))) !== 0;
}

function countryOf(region: string): string | undefined {
  countrySet ??= new Set(COUNTRIES.split(" "));
  if (/^[A-Za-z]{2}$/.test(region)) {
    const r = region.toUpperCase();
    return countrySet.has(r) ? r : undefined;
  }
  if (!/^[0-9]{3}$/.test(region)) return undefined;
  m49Map ??= new Map(M49.split(" ").map((e) => [e.slice(0, 3), e.slice(3)]));
  return m49Map.get(region);
}

function knownScript(s: string): boolean {
  scriptSet ??= new Set(SCRIPTS.split(" "));
  return scriptSet.has(s[0]!.toUpperCase() + s.slice(1).toLowerCase());
}

const VARIANT = /^(?:[0-9A-Za-z]{5,8}|[0-9][0-9A-Za-z]{3})$/;

/**
 * The number style of a BCP 47 tag (`_` or `-`, any case) with a known language and a country
 * region, or undefined when eKuiper rejects the locale. Scripts, variants and extensions are
 * checked for form and otherwise ignored.
 */
function numberClass(tag: string): NumberClass | undefined {
  const parts = tag.split(/[-_]/);
  const lang = parts[0]!.toLowerCase();
  if (!/^[a-z]{2,3}$/.test(lang) || !knownLanguage(lang)) return undefined;
  let i = 1;
  if (parts[i] !== undefined && /^[A-Za-z]{4}$/.test(parts[i]!)) {
    if (!knownScript(parts[i]!)) return undefined;
    i++;
  }
  const region = parts[i] === undefined ? undefined : countryOf(parts[i]!);
  if (region === undefined) return undefined;
  for (i++; i < parts.length && VARIANT.test(parts[i]!); i++);
  while (i < parts.length) {
    const single = parts[i]!.toLowerCase();
    if (!/^[0-9a-z]$/.test(single)) return undefined;
    const sub = single === "x" ? /^[0-9A-Za-z]{1,8}$/ : /^[0-9A-Za-z]{2,8}$/;
    const start = ++i;
    while (i < parts.length && sub.test(parts[i]!) && (single === "x" || parts[i]!.length > 1)) i++;
    if (i === start) return undefined;
  }
  const entry =
    (Object.hasOwn(LANGUAGES, lang) ? LANGUAGES[lang] : undefined) ??
    (Object.hasOwn(LANGUAGE_ALIASES, lang) ? LANGUAGES[LANGUAGE_ALIASES[lang]!] : undefined) ??
    "0";
  let cls = Number(entry.split(" ", 1)[0]);
  const at = entry.indexOf(" " + region);
  if (at >= 0) cls = Number(/^\d+/.exec(entry.slice(at + 3))![0]);
  return CLASSES[cls];
}

const localeCache = new Map<string, NumberClass | null>();

function localise(c: NumberClass, neg: boolean, int: string, frac: string): string {
  const [negPrefix, group, decimal, zero, g1, g2] = c;
  const digit = (ch: string) =>
    zero === 0x30 ? ch : String.fromCodePoint(zero + ch.charCodeAt(0) - 0x30);
  let out = "";
  let cut = int.length - g1;
  if (cut <= 0) {
    for (const ch of int) out += digit(ch);
  } else {
    let tail = "";
    for (const ch of int.slice(cut)) tail += digit(ch);
    const groups: string[] = [tail];
    while (cut > 0) {
      const start = Math.max(0, cut - g2);
      let g = "";
      for (const ch of int.slice(start, cut)) g += digit(ch);
      groups.unshift(g);
      cut = start;
    }
    out = groups.join(group);
  }
  if (frac) {
    out += decimal;
    for (const ch of frac) out += digit(ch);
  }
  return (neg ? negPrefix : "") + out;
}

/** `format` with a locale; throws RowError `not support for the specific locale:<locale>`. */
export function formatLocale(x: number, d: number, locale: string): string {
  let c = localeCache.get(locale);
  if (c === undefined) {
    c = numberClass(locale) ?? null;
    if (localeCache.size >= 1024) localeCache.clear();
    localeCache.set(locale, c);
  }
  if (c === null) throw new RowError(`not support for the specific locale:${locale}`);
  if (Number.isNaN(x)) return "NaN";
  if (!Number.isFinite(x)) return (x < 0 ? c[0] : "") + "\u221e";
  const [int, frac] = roundedDigits(x, d);
  return localise(c, x < 0, int, frac);
}
