/**
 * Go-compatible time values: an instant with nanosecond precision and a zone (Go `time.Time`),
 * and a duration (Go `time.Duration`). Formatting follows Go's `Time.String()` and RFC 3339.
 */

/** A time zone: offset and abbreviation at an instant, as Go's `time.Location` reports them. */
export interface Zone {
  readonly name: string;
  /** Seconds east of UTC at the instant `ms` (epoch milliseconds). */
  offsetAt(ms: number): number;
  /** Abbreviation at the instant, e.g. `UTC`, `CST`, `+0800`. */
  abbrevAt(ms: number): string;
}

export const UTC: Zone = {
  name: "UTC",
  offsetAt: () => 0,
  abbrevAt: () => "UTC",
};

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

function pad(n: number, w: number): string {
  return String(n).padStart(w, "0");
}

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
  const d = new Date(dt.ms + offset * 1000);
  return {
    year: d.getUTCFullYear(),
    month: d.getUTCMonth() + 1,
    day: d.getUTCDate(),
    hour: d.getUTCHours(),
    minute: d.getUTCMinutes(),
    second: d.getUTCSeconds(),
    nanos: d.getUTCMilliseconds() * 1_000_000 + dt.ns,
    weekday: d.getUTCDay(),
    offset,
  };
}

function offsetText(offset: number, colon: boolean): string {
  const sign = offset < 0 ? "-" : "+";
  const a = Math.abs(offset);
  return sign + pad(Math.floor(a / 3600), 2) + (colon ? ":" : "") + pad(Math.floor((a % 3600) / 60), 2);
}

function fraction(nanos: number): string {
  if (nanos === 0) return "";
  return "." + pad(nanos, 9).replace(/0+$/, "");
}

/** Go `Time.String()`: `2006-01-02 15:04:05.999999999 -0700 MST`. */
export function formatGoTimeString(dt: DateTime): string {
  const c = civil(dt);
  return (
    `${pad(c.year, 4)}-${pad(c.month, 2)}-${pad(c.day, 2)} ${pad(c.hour, 2)}:${pad(c.minute, 2)}:${pad(c.second, 2)}` +
    `${fraction(c.nanos)} ${offsetText(c.offset, false)} ${dt.zone.abbrevAt(dt.ms)}`
  );
}

/** RFC 3339 with trimmed nanoseconds (Go's JSON encoding of a `time.Time`). */
export function formatRfc3339Nano(dt: DateTime): string {
  const c = civil(dt);
  const zone = c.offset === 0 ? "Z" : offsetText(c.offset, true);
  return (
    `${pad(c.year, 4)}-${pad(c.month, 2)}-${pad(c.day, 2)}T${pad(c.hour, 2)}:${pad(c.minute, 2)}:${pad(c.second, 2)}` +
    `${fraction(c.nanos)}${zone}`
  );
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
// Zones and parsing. (Filled in by the datetime work; signatures are the contract.)

import type { Value } from "./values.ts";

/** A zone by IANA name (`UTC`, `Local`, `Asia/Shanghai`); undefined when unknown. */
export function zoneByName(name: string): Zone | undefined {
  if (name === "" || name === "UTC") return UTC;
  return undefined;
}

/** The process's local zone (TZ environment variable, else /etc/localtime). */
export function localZone(): Zone {
  return UTC;
}

/**
 * Parses a date-time string (functions §7.2): `format` (an eKuiper pattern) first when given,
 * then the default layouts. Throws RowError `Can't parse string as time: <s>`.
 */
export function parseTime(s: string, zone: Zone, format?: string): DateTime {
  void s, zone, format;
  throw new Error("parseTime: not implemented yet");
}

/** functions §0.6 `toTime`: numbers are epoch ms, strings parsed, datetimes unchanged. */
export function toTime(v: Value, zone: Zone): DateTime {
  void v, zone;
  throw new Error("toTime: not implemented yet");
}
