/**
 * Go reference layouts (`2006-01-02 15:04:05`): the token scanner (Go's `nextStdChunk`) and the
 * formatter (`Time.Format`), with Go's exact rules. Layouts are compiled once into chunk lists
 * and cached by text; `layout-parse.ts` holds the parser.
 */
import {
  civilFromDays, LONG_DAY_NAMES, LONG_MONTH_NAMES, SHORT_DAY_NAMES, SHORT_MONTH_NAMES,
  weekdayOfDays, yearDay, type Ymd,
} from "./civil.ts";
import type { Zone } from "./zones.ts";

// Token codes (Go's std* constants).
export enum Std {
  None, LongMonth, Month, NumMonth, ZeroMonth, LongWeekDay, WeekDay, Day, UnderDay, ZeroDay,
  UnderYearDay, ZeroYearDay, Hour, Hour12, ZeroHour12, Minute, ZeroMinute, Second, ZeroSecond,
  LongYear, Year, PM, pm, TZ, ISO8601TZ, ISO8601SecondsTZ, ISO8601ShortTZ, ISO8601ColonTZ,
  ISO8601ColonSecondsTZ, NumTZ, NumSecondsTz, NumShortTZ, NumColonTZ, NumColonSecondsTZ,
  FracSecond0, FracSecond9,
}

/** One literal prefix followed by one token; the last chunk of a layout may have `std` None. */
export interface Chunk {
  prefix: string;
  /** `prefix` as Go sees it when parsing: one char per UTF-8 byte. */
  prefixBytes: string;
  std: Std;
  /** Fractional seconds: digit count and separator (`.` or `,`). */
  digits: number;
  sep: string;
}

export type Layout = readonly Chunk[];

const STD0X = [Std.ZeroMonth, Std.ZeroDay, Std.ZeroHour12, Std.ZeroMinute, Std.ZeroSecond, Std.Year];

function isLower(s: string, i: number): boolean {
  const c = s.charCodeAt(i);
  return c >= 97 && c <= 122;
}
export function isDigitAt(s: string, i: number): boolean {
  const c = s.charCodeAt(i);
  return c >= 48 && c <= 57;
}

/** Go `nextStdChunk`: the prefix before the first token, the token, and the length it spans. */
function nextStdChunk(l: string): [prefix: string, std: Std, len: number, digits: number, sep: string] {
  for (let i = 0; i < l.length; i++) {
    const c = l[i]!;
    const at = (t: string) => l.startsWith(t, i);
    switch (c) {
      case "J":
        if (at("Jan")) {
          if (at("January")) return [l.slice(0, i), Std.LongMonth, 7, 0, ""];
          if (!isLower(l, i + 3)) return [l.slice(0, i), Std.Month, 3, 0, ""];
        }
        break;
      case "M":
        if (at("Mon")) {
          if (at("Monday")) return [l.slice(0, i), Std.LongWeekDay, 6, 0, ""];
          if (!isLower(l, i + 3)) return [l.slice(0, i), Std.WeekDay, 3, 0, ""];
        }
        if (at("MST")) return [l.slice(0, i), Std.TZ, 3, 0, ""];
        break;
      case "0": {
        const d = l.charCodeAt(i + 1);
        if (d >= 49 && d <= 54) return [l.slice(0, i), STD0X[d - 49]!, 2, 0, ""];
        if (at("002")) return [l.slice(0, i), Std.ZeroYearDay, 3, 0, ""];
        break;
      }
      case "1":
        if (l[i + 1] === "5") return [l.slice(0, i), Std.Hour, 2, 0, ""];
        return [l.slice(0, i), Std.NumMonth, 1, 0, ""];
      case "2":
        if (at("2006")) return [l.slice(0, i), Std.LongYear, 4, 0, ""];
        return [l.slice(0, i), Std.Day, 1, 0, ""];
      case "_":
        if (l[i + 1] === "2") {
          // `_2006` is a literal underscore followed by the long year.
          if (l.startsWith("2006", i + 1)) return [l.slice(0, i + 1), Std.LongYear, 4, 0, ""];
          return [l.slice(0, i), Std.UnderDay, 2, 0, ""];
        }
        if (at("__2")) return [l.slice(0, i), Std.UnderYearDay, 3, 0, ""];
        break;
      case "3":
        return [l.slice(0, i), Std.Hour12, 1, 0, ""];
      case "4":
        return [l.slice(0, i), Std.Minute, 1, 0, ""];
      case "5":
        return [l.slice(0, i), Std.Second, 1, 0, ""];
      case "P":
        if (l[i + 1] === "M") return [l.slice(0, i), Std.PM, 2, 0, ""];
        break;
      case "p":
        if (l[i + 1] === "m") return [l.slice(0, i), Std.pm, 2, 0, ""];
        break;
      case "-":
        if (at("-070000")) return [l.slice(0, i), Std.NumSecondsTz, 7, 0, ""];
        if (at("-07:00:00")) return [l.slice(0, i), Std.NumColonSecondsTZ, 9, 0, ""];
        if (at("-0700")) return [l.slice(0, i), Std.NumTZ, 5, 0, ""];
        if (at("-07:00")) return [l.slice(0, i), Std.NumColonTZ, 6, 0, ""];
        if (at("-07")) return [l.slice(0, i), Std.NumShortTZ, 3, 0, ""];
        break;
      case "Z":
        if (at("Z070000")) return [l.slice(0, i), Std.ISO8601SecondsTZ, 7, 0, ""];
        if (at("Z07:00:00")) return [l.slice(0, i), Std.ISO8601ColonSecondsTZ, 9, 0, ""];
        if (at("Z0700")) return [l.slice(0, i), Std.ISO8601TZ, 5, 0, ""];
        if (at("Z07:00")) return [l.slice(0, i), Std.ISO8601ColonTZ, 6, 0, ""];
        if (at("Z07")) return [l.slice(0, i), Std.ISO8601ShortTZ, 3, 0, ""];
        break;
      case ".":
      case ",": {
        const ch = l[i + 1];
        if (ch === "0" || ch === "9") {
          let j = i + 1;
          while (j < l.length && l[j] === ch) j++;
          // The run of digits must end here: only a fractional second if all digits are the same.
          if (!isDigitAt(l, j)) {
            return [l.slice(0, i), ch === "0" ? Std.FracSecond0 : Std.FracSecond9, j - i, (j - i - 1) & 0xfff, c];
          }
        }
        break;
      }
    }
  }
  return [l, Std.None, 0, 0, ""];
}

const ASCII = /^[\x00-\x7f]*$/;
const enc = new TextEncoder();
/** Go compares bytes: non-ASCII text becomes one char per UTF-8 byte. */
export function bytesOf(s: string): string {
  return ASCII.test(s) ? s : String.fromCharCode(...enc.encode(s));
}

const layoutCache = new Map<string, Layout>();

/** Compiles (and caches) a Go layout string. */
export function compileLayout(layout: string): Layout {
  let chunks = layoutCache.get(layout);
  if (chunks) return chunks;
  const out: Chunk[] = [];
  let rest = layout;
  for (;;) {
    const [prefix, std, len, digits, sep] = nextStdChunk(rest);
    out.push({ prefix, prefixBytes: bytesOf(prefix), std, digits, sep });
    if (std === Std.None) break;
    rest = rest.slice(prefix.length + len);
  }
  if (layoutCache.size > 1000) layoutCache.clear();
  layoutCache.set(layout, (chunks = out));
  return chunks;
}

// ---------------------------------------------------------------------------------------------
// Formatting

function appendInt(x: number, width: number): string {
  const s = String(Math.abs(x));
  const p = s.length < width ? "0".repeat(width - s.length) + s : s;
  return x < 0 ? "-" + p : p;
}

const scratch: Ymd = { year: 0, month: 0, day: 0 };

/** Go `Time.Format(layout)` of the instant `ms` + `ns` nanoseconds in `zone`. */
export function formatLayout(ms: number, ns: number, zone: Zone, layout: Layout): string {
  const offset = zone.offsetAt(ms);
  const local = Math.floor(ms / 1000) + offset;
  const days = Math.floor(local / 86400);
  const sod = local - days * 86400;
  const nanos = (ms - Math.floor(ms / 1000) * 1000) * 1_000_000 + ns;
  const { year, month, day } = civilFromDays(days, scratch);
  const hour = Math.floor(sod / 3600);
  const min = Math.floor((sod % 3600) / 60);
  const sec = sod % 60;
  let b = "";
  for (const c of layout) {
    b += c.prefix;
    switch (c.std) {
      case Std.None: break;
      case Std.Year: b += appendInt(Math.abs(year) % 100, 2); break;
      case Std.LongYear: b += appendInt(year, 4); break;
      case Std.Month: b += SHORT_MONTH_NAMES[month - 1]; break;
      case Std.LongMonth: b += LONG_MONTH_NAMES[month - 1]; break;
      case Std.NumMonth: b += month; break;
      case Std.ZeroMonth: b += appendInt(month, 2); break;
      case Std.WeekDay: b += SHORT_DAY_NAMES[weekdayOfDays(days)]; break;
      case Std.LongWeekDay: b += LONG_DAY_NAMES[weekdayOfDays(days)]; break;
      case Std.Day: b += day; break;
      case Std.UnderDay: b += (day < 10 ? " " : "") + day; break;
      case Std.ZeroDay: b += appendInt(day, 2); break;
      case Std.UnderYearDay: {
        const yd = yearDay(year, month, day);
        b += (yd < 100 ? (yd < 10 ? "  " : " ") : "") + yd;
        break;
      }
      case Std.ZeroYearDay: b += appendInt(yearDay(year, month, day), 3); break;
      case Std.Hour: b += appendInt(hour, 2); break;
      case Std.Hour12: b += hour % 12 === 0 ? 12 : hour % 12; break;
      case Std.ZeroHour12: b += appendInt(hour % 12 === 0 ? 12 : hour % 12, 2); break;
      case Std.Minute: b += min; break;
      case Std.ZeroMinute: b += appendInt(min, 2); break;
      case Std.Second: b += sec; break;
      case Std.ZeroSecond: b += appendInt(sec, 2); break;
      case Std.PM: b += hour >= 12 ? "PM" : "AM"; break;
      case Std.pm: b += hour >= 12 ? "pm" : "am"; break;
      case Std.TZ: b += zone.abbrevAt(ms); break;
      case Std.FracSecond0:
      case Std.FracSecond9: b += formatNano(nanos, c); break;
      default: b += formatOffset(offset, c.std);
    }
  }
  return b;
}

function formatOffset(offset: number, std: Std): string {
  const iso = std === Std.ISO8601TZ || std === Std.ISO8601ColonTZ || std === Std.ISO8601SecondsTZ ||
    std === Std.ISO8601ShortTZ || std === Std.ISO8601ColonSecondsTZ;
  if (offset === 0 && iso) return "Z";
  let zone = Math.trunc(offset / 60);
  let abs = offset;
  let b = "+";
  if (zone < 0) (b = "-"), (zone = -zone), (abs = -abs);
  b += appendInt(Math.floor(zone / 60), 2);
  const colon = std === Std.ISO8601ColonTZ || std === Std.NumColonTZ ||
    std === Std.ISO8601ColonSecondsTZ || std === Std.NumColonSecondsTZ;
  if (colon) b += ":";
  if (std !== Std.NumShortTZ && std !== Std.ISO8601ShortTZ) b += appendInt(zone % 60, 2);
  if (std === Std.ISO8601SecondsTZ || std === Std.NumSecondsTz || std === Std.NumColonSecondsTZ ||
    std === Std.ISO8601ColonSecondsTZ) {
    if (colon) b += ":";
    b += appendInt(abs % 60, 2);
  }
  return b;
}

function formatNano(nanos: number, c: Chunk): string {
  const trim = c.std === Std.FracSecond9;
  if (trim && (c.digits === 0 || nanos === 0)) return "";
  let digits = appendInt(nanos, 9);
  if (c.digits < 9) digits = digits.slice(0, c.digits);
  if (trim) digits = digits.replace(/0+$/, "");
  return digits === "" ? "" : c.sep + digits;
}
