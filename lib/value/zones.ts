/**
 * Time zones as Go's `time.Location`: UTC, fixed offsets, IANA zones read from the system's
 * tzdata (exact offsets and abbreviations, as Go prints them), and the process-local zone.
 */
import { readFileSync } from "node:fs";
import { RowError } from "../errors.ts";
import { parseTzif } from "./tzif.ts";

/** A time zone: offset and abbreviation at an instant, as Go's `time.Location` reports them. */
export interface Zone {
  readonly name: string;
  /** Seconds east of UTC at the instant `ms` (epoch milliseconds). */
  offsetAt(ms: number): number;
  /** Abbreviation at the instant, e.g. `UTC`, `CST`, `+0800`. */
  abbrevAt(ms: number): string;
  /**
   * Go `Location.lookupName`: the offset of a zone abbreviation of this location, preferring one
   * in effect at `unixSec`; undefined when the location has no such abbreviation.
   */
  lookupName?(abbrev: string, unixSec: number): number | undefined;
}

class UtcZone implements Zone {
  readonly name: string;
  constructor(name: string) {
    this.name = name;
  }
  offsetAt(): number {
    return 0;
  }
  abbrevAt(): string {
    return "UTC";
  }
}

export const UTC: Zone = new UtcZone("UTC");

/** `-0700` rendering of an offset in seconds (what Go prints for a zone without a name). */
export function numericOffset(offset: number): string {
  const m = Math.trunc(offset / 60);
  const a = Math.abs(m);
  const h = Math.floor(a / 60);
  const mm = a % 60;
  return (m < 0 ? "-" : "+") + (h < 10 ? "0" : "") + h + (mm < 10 ? "0" : "") + mm;
}

/** Go `time.FixedZone(name, offset)`; an empty name prints as the numeric offset. */
export class FixedZone implements Zone {
  readonly name: string;
  readonly offset: number;
  private readonly abbrev: string;
  constructor(name: string, offset: number) {
    this.name = name;
    this.offset = offset;
    this.abbrev = name === "" ? numericOffset(offset) : name;
  }
  offsetAt(): number {
    return this.offset;
  }
  abbrevAt(): string {
    return this.abbrev;
  }
  lookupName(abbrev: string): number | undefined {
    return abbrev === this.name ? this.offset : undefined;
  }
}

/** Fallback for a zone Intl knows but the system tzdata lacks: offsets from `Intl.DateTimeFormat`. */
class IntlZone implements Zone {
  readonly name: string;
  private readonly offsetFmt: Intl.DateTimeFormat;
  private readonly nameFmt: Intl.DateTimeFormat;
  private lastMinute = NaN;
  private lastOffset = 0;
  private lastAbbrev = "";
  constructor(name: string) {
    this.name = name;
    this.offsetFmt = new Intl.DateTimeFormat("en-US", { timeZone: name, timeZoneName: "longOffset" });
    this.nameFmt = new Intl.DateTimeFormat("en-US", { timeZone: name, timeZoneName: "short" });
  }
  /** The canonical name Intl resolved (Intl matches names case-insensitively, Go does not). */
  resolvedName(): string {
    return this.offsetFmt.resolvedOptions().timeZone;
  }
  offsetAt(ms: number): number {
    this.fill(ms);
    return this.lastOffset;
  }
  abbrevAt(ms: number): string {
    this.fill(ms);
    return this.lastAbbrev;
  }
  private fill(ms: number): void {
    const minute = Math.floor(ms / 60000);
    if (minute === this.lastMinute) return;
    this.lastMinute = minute;
    const off = zonePart(this.offsetFmt, ms);
    const m = /GMT([+-])(\d\d):(\d\d)(?::(\d\d))?/.exec(off);
    this.lastOffset = m ? (m[1] === "-" ? -1 : 1) * (Number(m[2]) * 3600 + Number(m[3]) * 60 + Number(m[4] ?? 0)) : 0;
    const short = zonePart(this.nameFmt, ms);
    // tzdata names zones without a customary abbreviation by their offset (`+08`, `+0530`).
    this.lastAbbrev = /^[A-Z]{3,5}$/.test(short) ? short : numericOffset(this.lastOffset).replace(/00$/, "");
  }
}

function zonePart(fmt: Intl.DateTimeFormat, ms: number): string {
  for (const p of fmt.formatToParts(ms)) if (p.type === "timeZoneName") return p.value;
  return "";
}

const ZONEINFO_DIRS = ["/usr/share/zoneinfo/", "/usr/share/lib/zoneinfo/", "/usr/lib/locale/TZ/", "/etc/zoneinfo/"];
const zoneCache = new Map<string, Zone | string>();

function readTzif(name: string, path: string): Zone | undefined {
  try {
    return parseTzif(name, readFileSync(path));
  } catch {
    return undefined;
  }
}

function loadFromSystem(name: string): Zone | undefined {
  const env = process.env.ZONEINFO;
  if (env) {
    const z = readTzif(name, env.replace(/\/?$/, "/") + name);
    if (z) return z;
  }
  for (const dir of ZONEINFO_DIRS) {
    const z = readTzif(name, dir + name);
    if (z) return z;
  }
  try {
    const intl = new IntlZone(name);
    if (intl.resolvedName() === name) return intl;
  } catch {
    // Not a zone Intl knows either.
  }
  return undefined;
}

/**
 * Go `time.LoadLocation`: `""`/`UTC` is UTC, `Local` the process zone, else an IANA name.
 * Throws RowError `unknown time zone <name>` or `time: invalid location name`.
 */
export function loadLocation(name: string): Zone {
  if (name === "" || name === "UTC") return UTC;
  if (name === "Local") return localZone();
  let z = zoneCache.get(name);
  if (z === undefined) {
    if (name.includes("..") || name[0] === "/" || name[0] === "\\") z = "time: invalid location name";
    else z = loadFromSystem(name) ?? `unknown time zone ${name}`;
    zoneCache.set(name, z);
  }
  if (typeof z === "string") throw new RowError(z);
  return z;
}

/** A zone by IANA name (`UTC`, `Local`, `Asia/Shanghai`); undefined when unknown. */
export function zoneByName(name: string): Zone | undefined {
  try {
    return loadLocation(name);
  } catch {
    return undefined;
  }
}

let local: Zone | undefined;

/** The process's local zone, as Go's `time.Local`: the TZ environment variable, else /etc/localtime. */
export function localZone(): Zone {
  if (!local) local = initLocal();
  return local;
}

function initLocal(): Zone {
  // Bun reports an empty TZ as present but undefined; Go treats TZ="" as UTC.
  let tz = Object.keys(process.env).includes("TZ") ? (process.env.TZ ?? "") : undefined;
  if (tz === undefined) {
    const z = readTzif("Local", "/etc/localtime");
    if (z) return z;
  } else if (tz !== "") {
    if (tz[0] === ":") tz = tz.slice(1);
    if (tz !== "" && tz[0] === "/") {
      const z = readTzif(tz === "/etc/localtime" ? "Local" : tz, tz);
      if (z) return z;
    } else if (tz !== "" && tz !== "UTC") {
      const z = zoneByName(tz);
      if (z) return z;
    }
  }
  return UTC;
}

/** Forgets the cached local zone (tests that change TZ). */
export function resetLocalZone(): void {
  local = undefined;
}

/**
 * Go `time.Date` on whole seconds: the Unix second of a civil time in `zone`. Fields may be out
 * of range and are normalised (day 0 = last day of the previous month).
 */
export function zonedUnix(days: number, secOfDay: number, zone: Zone): number {
  const unix = days * 86400 + secOfDay;
  const offset = zone.offsetAt(unix * 1000);
  if (offset === 0) return unix;
  // The offset at the wall-clock instant may differ from the one at the real instant near a
  // transition; Go then looks up again at the adjusted instant.
  return unix - zone.offsetAt((unix - offset) * 1000);
}
