/**
 * Go's `time.ParseInLocation` over a compiled layout, with Go's exact acceptance rules (a
 * fraction after the seconds even when the layout has none, `_2` spaces, zone abbreviations and
 * numeric offsets resolved against the location).
 */
import { daysFromCivil, daysIn, DAYS_BEFORE, isLeap, LONG_DAY_NAMES, LONG_MONTH_NAMES, SHORT_DAY_NAMES, SHORT_MONTH_NAMES } from "./civil.ts";
import { bytesOf, isDigitAt, Std, type Layout } from "./layout.ts";
import { FixedZone, UTC, zonedUnix, type Zone } from "./zones.ts";

/** A parsed instant: Unix seconds, nanoseconds within the second, and the zone. */
export interface Parsed {
  sec: number;
  nsec: number;
  zone: Zone;
}

function cutspace(s: string): string {
  let i = 0;
  while (i < s.length && s[i] === " ") i++;
  return s.slice(i);
}

/** Go `skip`: consumes a literal prefix, where a run of spaces matches any run of spaces. */
function skip(value: string, prefix: string): string | undefined {
  while (prefix.length > 0) {
    if (prefix[0] === " ") {
      if (value.length > 0 && value[0] !== " ") return undefined;
      prefix = cutspace(prefix);
      value = cutspace(value);
      continue;
    }
    if (value.length === 0 || value[0] !== prefix[0]) return undefined;
    prefix = prefix.slice(1);
    value = value.slice(1);
  }
  return value;
}

// Parser cursor state, reused (the parser is not re-entrant and never awaits).
let rest = "";

/** Go `getnum`: one or two digits (exactly two when `fixed`); -1 on failure. */
function getnum(fixed: boolean): number {
  const s = rest;
  if (!isDigitAt(s, 0)) return -1;
  if (!isDigitAt(s, 1)) {
    if (fixed) return -1;
    rest = s.slice(1);
    return s.charCodeAt(0) - 48;
  }
  rest = s.slice(2);
  return (s.charCodeAt(0) - 48) * 10 + s.charCodeAt(1) - 48;
}

function getnum3(fixed: boolean): number {
  const s = rest;
  let n = 0;
  let i = 0;
  for (; i < 3 && isDigitAt(s, i); i++) n = n * 10 + s.charCodeAt(i) - 48;
  if (i === 0 || (fixed && i !== 3)) return -1;
  rest = s.slice(i);
  return n;
}

/** Go `atoi`: optional sign then digits only; undefined on failure. */
function atoi(s: string): number | undefined {
  let i = 0;
  let neg = false;
  if (s[0] === "-" || s[0] === "+") (neg = s[0] === "-"), (i = 1);
  if (i >= s.length) return undefined;
  let x = 0;
  for (; i < s.length; i++) {
    if (!isDigitAt(s, i)) return undefined;
    x = x * 10 + s.charCodeAt(i) - 48;
  }
  return neg ? -x : x;
}

/** Go `lookup`: case-insensitive prefix match against a name table; index or -1. */
function lookup(tab: readonly string[]): number {
  for (let i = 0; i < tab.length; i++) {
    const v = tab[i]!;
    if (rest.length >= v.length && rest.slice(0, v.length).toLowerCase() === v.toLowerCase()) {
      rest = rest.slice(v.length);
      return i;
    }
  }
  return -1;
}

/** Go `parseNanoseconds` over `value[0:n]` (separator included); undefined on failure. */
function parseNanos(value: string, n: number): number | undefined {
  if (value[0] !== "." && value[0] !== ",") return undefined;
  if (n > 10) n = 10;
  const ns = atoi(value.slice(1, n));
  if (ns === undefined || ns < 0) return undefined;
  return ns * 10 ** (10 - n);
}

/** Go `parseTimeZone`: length of a zone abbreviation at the start of `v`, 0 if none. */
function parseTimeZone(v: string): number {
  if (v.length < 3) return 0;
  if (v.startsWith("ChST") || v.startsWith("MeST")) return 4;
  if (v.startsWith("GMT")) return 3 + parseSignedOffset(v.slice(3));
  if (v[0] === "+" || v[0] === "-") return parseSignedOffset(v);
  let n = 0;
  for (; n < 6 && n < v.length; n++) {
    const c = v.charCodeAt(n);
    if (c < 65 || c > 90) break;
  }
  if (n === 5) return v[4] === "T" ? 5 : 0;
  if (n === 4) return v[3] === "T" || v.startsWith("WITA") ? 4 : 0;
  return n === 3 ? 3 : 0;
}

function parseSignedOffset(v: string): number {
  if (v[0] !== "-" && v[0] !== "+") return 0;
  let i = 1;
  let x = 0;
  for (; i < v.length && isDigitAt(v, i); i++) x = x * 10 + v.charCodeAt(i) - 48;
  if (i === 1 || x > 23) return 0;
  return i;
}

/**
 * Go `time.ParseInLocation(layout, value, loc)`: wall-clock values without a zone are in
 * `loc`, a numeric offset equal to `loc`'s at that instant yields `loc`. Undefined on failure.
 */
export function parseLayout(layout: Layout, input: string, loc: Zone): Parsed | undefined {
  rest = bytesOf(input);
  let amSet = false;
  let pmSet = false;
  let year = 0, month = -1, day = -1, yday = -1, hour = 0, min = 0, sec = 0, nsec = 0;
  let z: Zone | undefined;
  let zoneOffset = -1;
  let zoneName = "";
  for (let ci = 0; ci < layout.length; ci++) {
    const c = layout[ci]!;
    const after = skip(rest, c.prefixBytes);
    if (after === undefined) return undefined;
    rest = after;
    if (c.std === Std.None) {
      if (rest.length !== 0) return undefined;
      break;
    }
    let ok = true;
    switch (c.std) {
      case Std.Year: {
        if (rest.length < 2) return undefined;
        const y = atoi(rest.slice(0, 2));
        if (y === undefined) return undefined;
        rest = rest.slice(2);
        year = y >= 69 ? y + 1900 : y + 2000;
        break;
      }
      case Std.LongYear: {
        if (rest.length < 4 || !isDigitAt(rest, 0)) return undefined;
        const y = atoi(rest.slice(0, 4));
        if (y === undefined) return undefined;
        rest = rest.slice(4);
        year = y;
        break;
      }
      case Std.Month: month = lookup(SHORT_MONTH_NAMES) + 1; ok = month > 0; break;
      case Std.LongMonth: month = lookup(LONG_MONTH_NAMES) + 1; ok = month > 0; break;
      case Std.NumMonth:
      case Std.ZeroMonth:
        month = getnum(c.std === Std.ZeroMonth);
        if (month < 0 || month === 0 || month > 12) return undefined;
        break;
      case Std.WeekDay: ok = lookup(SHORT_DAY_NAMES) >= 0; break;
      case Std.LongWeekDay: ok = lookup(LONG_DAY_NAMES) >= 0; break;
      case Std.Day:
      case Std.UnderDay:
      case Std.ZeroDay:
        if (c.std === Std.UnderDay && rest[0] === " ") rest = rest.slice(1);
        day = getnum(c.std === Std.ZeroDay);
        ok = day >= 0;
        break;
      case Std.UnderYearDay:
      case Std.ZeroYearDay:
        for (let i = 0; i < 2; i++) if (c.std === Std.UnderYearDay && rest[0] === " ") rest = rest.slice(1);
        yday = getnum3(c.std === Std.ZeroYearDay);
        ok = yday >= 0;
        break;
      case Std.Hour:
        hour = getnum(false);
        if (hour < 0 || hour >= 24) return undefined;
        break;
      case Std.Hour12:
      case Std.ZeroHour12:
        hour = getnum(c.std === Std.ZeroHour12);
        if (hour < 0 || hour > 12) return undefined;
        break;
      case Std.Minute:
      case Std.ZeroMinute:
        min = getnum(c.std === Std.ZeroMinute);
        if (min < 0 || min >= 60) return undefined;
        break;
      case Std.Second:
      case Std.ZeroSecond: {
        sec = getnum(c.std === Std.ZeroSecond);
        if (sec < 0 || sec >= 60) return undefined;
        // A fractional second in the value but not in the layout is accepted.
        if (rest.length >= 2 && (rest[0] === "." || rest[0] === ",") && isDigitAt(rest, 1)) {
          const next = layout[ci + 1]?.std;
          if (next === Std.FracSecond0 || next === Std.FracSecond9) break;
          let n = 2;
          while (n < rest.length && isDigitAt(rest, n)) n++;
          const ns = parseNanos(rest, n);
          if (ns === undefined) return undefined;
          nsec = ns;
          rest = rest.slice(n);
        }
        break;
      }
      case Std.PM:
      case Std.pm: {
        if (rest.length < 2) return undefined;
        const p = rest.slice(0, 2);
        rest = rest.slice(2);
        const [pm, am] = c.std === Std.PM ? ["PM", "AM"] : ["pm", "am"];
        if (p === pm) pmSet = true;
        else if (p === am) amSet = true;
        else return undefined;
        break;
      }
      case Std.TZ: {
        if (rest.startsWith("UTC")) {
          z = UTC;
          rest = rest.slice(3);
          break;
        }
        const n = parseTimeZone(rest);
        if (n === 0) return undefined;
        zoneName = rest.slice(0, n);
        rest = rest.slice(n);
        break;
      }
      case Std.FracSecond0: {
        const nd = 1 + c.digits;
        if (rest.length < nd) return undefined;
        const ns = parseNanos(rest, nd);
        if (ns === undefined) return undefined;
        nsec = ns;
        rest = rest.slice(nd);
        break;
      }
      case Std.FracSecond9: {
        if (rest.length < 2 || (rest[0] !== "." && rest[0] !== ",") || !isDigitAt(rest, 1)) break;
        let i = 0;
        while (i + 1 < rest.length && isDigitAt(rest, i + 1)) i++;
        const ns = parseNanos(rest, 1 + i);
        if (ns === undefined) return undefined;
        nsec = ns;
        rest = rest.slice(1 + i);
        break;
      }
      default: {
        const iso = c.std === Std.ISO8601TZ || c.std === Std.ISO8601ShortTZ || c.std === Std.ISO8601ColonTZ ||
          c.std === Std.ISO8601SecondsTZ || c.std === Std.ISO8601ColonSecondsTZ;
        if (iso && rest[0] === "Z") {
          rest = rest.slice(1);
          z = UTC;
          break;
        }
        const off = parseOffset(c.std);
        if (off === undefined) return undefined;
        zoneOffset = off;
      }
    }
    if (!ok) return undefined;
  }
  if (pmSet && hour < 12) hour += 12;
  else if (amSet && hour === 12) hour = 0;

  if (yday >= 0) {
    let d = 0;
    let m = 0;
    if (isLeap(year)) {
      if (yday === 31 + 29) (m = 2), (d = 29);
      else if (yday > 31 + 29) yday--;
    }
    if (yday < 1 || yday > 365) return undefined;
    if (m === 0) {
      m = Math.floor((yday - 1) / 31) + 1;
      if (DAYS_BEFORE[m]! < yday) m++;
      d = yday - DAYS_BEFORE[m - 1]!;
    }
    if ((month >= 0 && month !== m) || (day >= 0 && day !== d)) return undefined;
    month = m;
    day = d;
  } else {
    if (month < 0) month = 1;
    if (day < 0) day = 1;
  }
  if (day < 1 || day > daysIn(month, year)) return undefined;

  const days = daysFromCivil(year, month, day);
  const sod = hour * 3600 + min * 60 + sec;
  if (z) return { sec: zonedUnix(days, sod, z), nsec, zone: z };
  if (zoneOffset !== -1) {
    const unix = days * 86400 + sod - zoneOffset;
    const ms = unix * 1000;
    if (loc.offsetAt(ms) === zoneOffset && (zoneName === "" || loc.abbrevAt(ms) === zoneName)) {
      return { sec: unix, nsec, zone: loc };
    }
    return { sec: unix, nsec, zone: new FixedZone(zoneName, zoneOffset) };
  }
  if (zoneName !== "") {
    const utc = days * 86400 + sod;
    const offset = loc.lookupName?.(zoneName, utc);
    if (offset !== undefined) return { sec: utc - offset, nsec, zone: loc };
    let fake = 0;
    if (zoneName.length > 3 && zoneName.startsWith("GMT")) fake = (atoi(zoneName.slice(3)) ?? 0) * 3600;
    return { sec: utc - fake, nsec, zone: new FixedZone(zoneName, fake) };
  }
  return { sec: zonedUnix(days, sod, loc), nsec, zone: loc };
}

/** The numeric zone offset forms (`-0700`, `-07:00`, `-07`, with seconds); seconds east of UTC. */
function parseOffset(std: Std): number | undefined {
  const v = rest;
  let hh: string, mm: string, ss: string;
  if (std === Std.ISO8601ColonTZ || std === Std.NumColonTZ) {
    if (v.length < 6 || v[3] !== ":") return undefined;
    (hh = v.slice(1, 3)), (mm = v.slice(4, 6)), (ss = "00"), (rest = v.slice(6));
  } else if (std === Std.NumShortTZ || std === Std.ISO8601ShortTZ) {
    if (v.length < 3) return undefined;
    (hh = v.slice(1, 3)), (mm = "00"), (ss = "00"), (rest = v.slice(3));
  } else if (std === Std.ISO8601ColonSecondsTZ || std === Std.NumColonSecondsTZ) {
    if (v.length < 9 || v[3] !== ":" || v[6] !== ":") return undefined;
    (hh = v.slice(1, 3)), (mm = v.slice(4, 6)), (ss = v.slice(7, 9)), (rest = v.slice(9));
  } else if (std === Std.ISO8601SecondsTZ || std === Std.NumSecondsTz) {
    if (v.length < 7) return undefined;
    (hh = v.slice(1, 3)), (mm = v.slice(3, 5)), (ss = v.slice(5, 7)), (rest = v.slice(7));
  } else {
    if (v.length < 5) return undefined;
    (hh = v.slice(1, 3)), (mm = v.slice(3, 5)), (ss = "00"), (rest = v.slice(5));
  }
  const two = (s: string) => (isDigitAt(s, 0) && isDigitAt(s, 1) ? Number(s) : -1);
  const h = two(hh), m = two(mm), s = two(ss);
  if (h < 0 || m < 0 || s < 0 || h > 24 || m > 60 || s > 60) return undefined;
  const off = (h * 60 + m) * 60 + s;
  if (v[0] === "+") return off;
  if (v[0] === "-") return -off;
  return undefined;
}
