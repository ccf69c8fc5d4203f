/**
 * Go-compatible time values: an instant with nanosecond precision and a zone (Go `time.Time`),
 * and a duration (Go `time.Duration`). Formatting follows Go's `Time.String()` and RFC 3339;
 * parsing follows eKuiper's `cast.InterfaceToTime` (functions §0.6, §7.2).
 */
import { RowError } from "../errors.ts";
import { civilFromDays, weekdayOfDays, type Ymd } from "./civil.ts";
import { compileLayout, formatLayout } from "./layout.ts";
import { parseDateString } from "./parse-time.ts";
import { patternToLayout } from "./pattern.ts";
// values.ts imports this module too; fmtV is only used inside functions, so the cycle is safe.
import { fmtV, type Value } from "./values.ts";
import type { Zone } from "./zones.ts";

export { UTC, zoneByName, localZone, loadLocation, FixedZone, type Zone } from "./zones.ts";
export { parseGoDuration } from "./duration.ts";

/** Go `time.Time`: `ms` epoch milliseconds (integer), `ns` extra nanoseconds 0..999999, a zone. */
export class DateTime {
  readonly ms: number;
  readonly ns: number;
  readonly zone: Zone;
  constructor(ms: number, ns: number, zone: Zone) {
    this.ms = ms;
    this.ns = ns;
    this.zone = zone;
  }
}

/** Go `time.Duration` in nanoseconds. */
export class Duration {
  readonly ns: bigint;
  constructor(ns: bigint) {
    this.ns = ns;
  }
  /** Go `Duration.String()`, e.g. `1h0m0s`, `1.5s`, `0s`. */
  toString(): string {
    return formatGoDuration(this.ns);
  }
}

/** Go `Duration.String()`. */
export function formatGoDuration(ns: bigint): string {
  if (ns === 0n) return "0s";
  const neg = ns < 0n;
  let u = neg ? -ns : ns;
  let out: string;
  if (u < 1_000_000_000n) {
    // Sub-second: the largest unit among ns, µs, ms, with a fraction.
    let unit = "ns";
    let div = 1n;
    if (u >= 1_000_000n) (unit = "ms"), (div = 1_000_000n);
    else if (u >= 1_000n) (unit = "µs"), (div = 1_000n);
    out = fixedFrac(u, div) + unit;
  } else {
    const h = u / 3_600_000_000_000n;
    u -= h * 3_600_000_000_000n;
    const m = u / 60_000_000_000n;
    u -= m * 60_000_000_000n;
    const s = fixedFrac(u, 1_000_000_000n) + "s";
    out = h > 0n ? `${h}h${m}m${s}` : m > 0n ? `${m}m${s}` : s;
  }
  return neg ? "-" + out : out;
}

function fixedFrac(v: bigint, div: bigint): string {
  const whole = v / div;
  const rest = v % div;
  if (rest === 0n) return whole.toString();
  const width = div.toString().length - 1;
  return `${whole}.${rest.toString().padStart(width, "0").replace(/0+$/, "")}`;
}


// ---------------------------------------------------------------------------------------------
// Calendar fields and formatting

const scratch: Ymd = { year: 0, month: 0, day: 0 };

/** Calendar fields of `dt` in its own zone. */
export function civil(dt: DateTime): {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
  nanos: number;
  weekday: number;
  offset: number;
} {
  const offset = dt.zone.offsetAt(dt.ms);
  const sec = Math.floor(dt.ms / 1000);
  const local = sec + offset;
  const days = Math.floor(local / 86400);
  const sod = local - days * 86400;
  const { year, month, day } = civilFromDays(days, scratch);
  return {
    year,
    month,
    day,
    hour: Math.floor(sod / 3600),
    minute: Math.floor((sod % 3600) / 60),
    second: sod % 60,
    nanos: (dt.ms - sec * 1000) * 1_000_000 + dt.ns,
    weekday: weekdayOfDays(days),
    offset,
  };
}

/** A DateTime from Unix seconds and nanoseconds within the second. */
export function fromUnix(sec: number, nsec: number, zone: Zone): DateTime {
  const msPart = Math.floor(nsec / 1_000_000);
  return new DateTime(sec * 1000 + msPart, nsec - msPart * 1_000_000, zone);
}

/** Go `Time.Format` with a Go reference layout (`2006-01-02 15:04:05`). */
export function formatGoLayout(dt: DateTime, layout: string): string {
  return formatLayout(dt.ms, dt.ns, dt.zone, compileLayout(layout));
}

/** Formats with an eKuiper pattern (`yyyy-MM-dd HH:mm:ss`, functions §7.1); throws RowError if invalid. */
export function formatPattern(dt: DateTime, pattern: string): string {
  return formatGoLayout(dt, patternToLayout(pattern));
}

const STRING_LAYOUT = compileLayout("2006-01-02 15:04:05.999999999 -0700 MST");
const RFC3339_NANO = compileLayout("2006-01-02T15:04:05.999999999Z07:00");

/** Go `Time.String()`: `2006-01-02 15:04:05.999999999 -0700 MST`. */
export function formatGoTimeString(dt: DateTime): string {
  return formatLayout(dt.ms, dt.ns, dt.zone, STRING_LAYOUT);
}

/** RFC 3339 with trimmed nanoseconds (Go's JSON encoding of a `time.Time`). */
export function formatRfc3339Nano(dt: DateTime): string {
  return formatLayout(dt.ms, dt.ns, dt.zone, RFC3339_NANO);
}

// ---------------------------------------------------------------------------------------------
// Parsing and conversion

function tryParse(s: string, zone: Zone, format: string | undefined, nowMs: number): DateTime | undefined {
  const first = format ? compileLayout(patternToLayout(format)) : undefined;
  const p = parseDateString(s, zone, first, nowMs);
  return p && fromUnix(p.sec, p.nsec, p.zone);
}

/**
 * Parses a date-time string (functions §7.2): `format` (an eKuiper pattern) first when given,
 * then the default layouts; missing date parts come from `nowMs` (default: the wall clock).
 * Throws RowError `Can't parse string as time: <s>` (or the pattern's error).
 */
export function parseTime(s: string, zone: Zone, format?: string, nowMs: number = Date.now()): DateTime {
  const t = tryParse(s, zone, format, nowMs);
  if (!t) throw new RowError(`Can't parse string as time: ${s}`);
  return t;
}

/** Go `int64(f)` of a float holding epoch milliseconds. */
function msOfFloat(f: number): number {
  return Number.isFinite(f) ? Math.trunc(f) : -9223372036854775808;
}

/**
 * functions §0.6 `toTime`: ints/floats are epoch ms in `zone`, strings parsed (§7.2, with
 * `format` first when given), datetimes unchanged; anything else (null too) is an error
 * `unsupported type to convert to timestamp <v>`.
 */
export function toTime(v: Value, zone: Zone, format?: string, nowMs?: number): DateTime {
  if (v instanceof DateTime) return v;
  if (typeof v === "bigint") return new DateTime(Number(v), 0, zone);
  if (typeof v === "number") return new DateTime(msOfFloat(v), 0, zone);
  if (typeof v === "string") return parseTime(v, zone, format, nowMs);
  throw new RowError(`unsupported type to convert to timestamp ${fmtV(v)}`);
}

/**
 * The right operand of a comparison whose left operand is a datetime (sql §7.6): like `toTime`
 * with the default layouts, but undefined instead of an error.
 */
export function toTimeForCompare(v: Value, zone: Zone, nowMs: number = Date.now()): DateTime | undefined {
  if (v instanceof DateTime) return v;
  if (typeof v === "bigint") return new DateTime(Number(v), 0, zone);
  if (typeof v === "number") return new DateTime(msOfFloat(v), 0, zone);
  if (typeof v === "string") return tryParse(v, zone, undefined, nowMs);
  return undefined;
}

/** Orders two instants: negative, zero or positive. */
export function compareTimes(a: DateTime, b: DateTime): number {
  return a.ms !== b.ms ? a.ms - b.ms : a.ns - b.ns;
}
