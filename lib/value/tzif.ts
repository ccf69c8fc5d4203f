/**
 * A zone loaded from a TZif file (RFC 8536), looked up exactly as Go's `time.Location` does:
 * binary search over the transitions, the POSIX TZ footer (`EST5EDT,M3.2.0,M11.1.0`) for
 * instants after the last transition, and a one-range cache in front of both.
 */
import { daysFromCivil, daysIn, DAYS_BEFORE, isLeap, SECONDS_PER_DAY } from "./civil.ts";
import type { Zone } from "./zones.ts";

/** Result of one lookup: the zone period containing an instant. */
interface Period {
  name: string;
  offset: number;
  start: number;
  end: number;
}

export class TzZone implements Zone {
  readonly name: string;
  private readonly tx: Float64Array;
  private readonly txZone: Uint8Array;
  private readonly zoneOffset: Int32Array;
  private readonly zoneName: string[];
  private readonly zoneDst: boolean[];
  private readonly extend: string;
  private readonly firstZone: number;
  // The last period looked up: most streams carry timestamps close to each other.
  private cacheStart = 0;
  private cacheEnd = 0;
  private cacheOffset = 0;
  private cacheName = "";

  constructor(name: string, tx: Float64Array, txZone: Uint8Array, offsets: Int32Array, names: string[], dst: boolean[], extend: string) {
    this.name = name;
    this.tx = tx;
    this.txZone = txZone;
    this.zoneOffset = offsets;
    this.zoneName = names;
    this.zoneDst = dst;
    this.extend = extend;
    this.firstZone = this.lookupFirstZone();
  }

  offsetAt(ms: number): number {
    const sec = Math.floor(ms / 1000);
    if (sec < this.cacheStart || sec >= this.cacheEnd) this.fill(sec);
    return this.cacheOffset;
  }

  abbrevAt(ms: number): string {
    const sec = Math.floor(ms / 1000);
    if (sec < this.cacheStart || sec >= this.cacheEnd) this.fill(sec);
    return this.cacheName;
  }

  /** Go `Location.lookupName`: the offset of abbreviation `abbrev`, preferring one in effect at `unix`. */
  lookupName(abbrev: string, unix: number): number | undefined {
    for (let i = 0; i < this.zoneName.length; i++) {
      if (this.zoneName[i] !== abbrev) continue;
      const off = this.zoneOffset[i]!;
      if (this.abbrevAt((unix - off) * 1000) === abbrev) return this.offsetAt((unix - off) * 1000);
    }
    for (let i = 0; i < this.zoneName.length; i++) if (this.zoneName[i] === abbrev) return this.zoneOffset[i];
    return undefined;
  }

  private fill(sec: number): void {
    const p = this.lookup(sec);
    this.cacheStart = p.start;
    this.cacheEnd = p.end;
    this.cacheOffset = p.offset;
    this.cacheName = p.name;
  }

  private lookup(sec: number): Period {
    const tx = this.tx;
    if (tx.length === 0 || sec < tx[0]!) {
      const z = this.firstZone;
      return { name: this.zoneName[z]!, offset: this.zoneOffset[z]!, start: -Infinity, end: tx.length ? tx[0]! : Infinity };
    }
    let lo = 0;
    let hi = tx.length;
    let end = Infinity;
    while (hi - lo > 1) {
      const m = (lo + hi) >>> 1;
      if (sec < tx[m]!) (end = tx[m]!), (hi = m);
      else lo = m;
    }
    const z = this.txZone[lo]!;
    const start = tx[lo]!;
    if (lo === tx.length - 1 && this.extend !== "") {
      const p = tzset(this.extend, start, sec);
      if (p) return p;
    }
    return { name: this.zoneName[z]!, offset: this.zoneOffset[z]!, start, end };
  }

  /** Go's choice of zone for instants before the first transition. */
  private lookupFirstZone(): number {
    let used = false;
    for (let i = 0; i < this.txZone.length; i++) if (this.txZone[i] === 0) used = true;
    if (!used) return 0;
    if (this.tx.length > 0 && this.zoneDst[this.txZone[0]!]) {
      for (let zi = this.txZone[0]! - 1; zi >= 0; zi--) if (!this.zoneDst[zi]) return zi;
    }
    for (let zi = 0; zi < this.zoneDst.length; zi++) if (!this.zoneDst[zi]) return zi;
    return 0;
  }
}

/** Parses TZif data the way Go's `LoadLocationFromTZData` does; undefined when malformed. */
export function parseTzif(name: string, data: Uint8Array): TzZone | undefined {
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  let p = 0;
  const need = (n: number) => p + n <= data.length;
  if (!need(44) || data[0] !== 0x54 || data[1] !== 0x5a || data[2] !== 0x69 || data[3] !== 0x66) return undefined;
  const version = data[4] === 0 ? 1 : data[4]! - 0x30;
  p = 20;
  let n = readCounts(view, p);
  p += 24;
  let is64 = false;
  if (version > 1) {
    p += n[3]! * 4 + n[3]! + n[4]! * 6 + n[5]! + n[2]! * 8 + n[1]! + n[0]! + 20;
    if (!need(24)) return undefined;
    n = readCounts(view, p);
    p += 24;
    is64 = true;
  }
  const [nUtc, nStd, nLeap, nTime, nZone, nChar] = n as [number, number, number, number, number, number];
  const size = is64 ? 8 : 4;
  if (!need(nTime * size + nTime + nZone * 6 + nChar + nLeap * (size + 4) + nStd + nUtc)) return undefined;
  if (nZone === 0) return undefined;
  const tx = new Float64Array(nTime);
  for (let i = 0; i < nTime; i++, p += size) tx[i] = is64 ? Number(view.getBigInt64(p)) : view.getInt32(p);
  const txZone = data.slice(p, p + nTime);
  p += nTime;
  const zoneAt = p;
  p += nZone * 6;
  const abbrev = data.subarray(p, p + nChar);
  p += nChar + nLeap * (size + 4) + nStd + nUtc;
  const offsets = new Int32Array(nZone);
  const names: string[] = [];
  const dst: boolean[] = [];
  for (let i = 0; i < nZone; i++) {
    const q = zoneAt + i * 6;
    offsets[i] = view.getInt32(q);
    dst.push(data[q + 4] !== 0);
    const ai = data[q + 5]!;
    if (ai >= abbrev.length) return undefined;
    let e = ai;
    while (e < abbrev.length && abbrev[e] !== 0) e++;
    names.push(String.fromCharCode(...abbrev.subarray(ai, e)));
  }
  for (let i = 0; i < nTime; i++) if (txZone[i]! >= nZone) return undefined;
  const rest = data.subarray(p);
  let extend = "";
  if (rest.length > 2 && rest[0] === 0x0a && rest[rest.length - 1] === 0x0a) {
    extend = new TextDecoder().decode(rest.subarray(1, rest.length - 1));
  }
  if (nTime === 0) {
    // Go builds one fake transition covering all time (fixed zones such as Etc/GMT+8).
    return new TzZone(name, new Float64Array([-Infinity]), new Uint8Array([0]), offsets, names, dst, extend);
  }
  return new TzZone(name, tx, txZone, offsets, names, dst, extend);
}

function readCounts(view: DataView, p: number): number[] {
  const n: number[] = [];
  for (let i = 0; i < 6; i++) n.push(view.getUint32(p + i * 4));
  return n;
}

// ---------------------------------------------------------------------------------------------
// POSIX TZ rules (Go's tzset), used after the last transition of a file.

interface Rule {
  kind: "J" | "D" | "M";
  day: number;
  week: number;
  mon: number;
  time: number;
}

const ruleCache = new Map<string, ParsedTz | null>();

interface ParsedTz {
  stdName: string;
  stdOffset: number;
  dst?: { name: string; offset: number; start: Rule; end: Rule };
}

function tzset(s: string, lastTx: number, sec: number): Period | undefined {
  let parsed = ruleCache.get(s);
  if (parsed === undefined) {
    parsed = parseTz(s) ?? null;
    ruleCache.set(s, parsed);
  }
  if (parsed === null) return undefined;
  if (!parsed.dst) return { name: parsed.stdName, offset: parsed.stdOffset, start: lastTx, end: Infinity };
  let { stdName, stdOffset } = parsed;
  let { name: dstName, offset: dstOffset } = parsed.dst;
  const days = Math.floor(sec / SECONDS_PER_DAY);
  const year = yearOfDays(days);
  const yearStart = daysFromCivil(year, 1, 1) * SECONDS_PER_DAY;
  const ysec = sec - yearStart;
  let startSec = ruleTime(year, parsed.dst.start, stdOffset);
  let endSec = ruleTime(year, parsed.dst.end, dstOffset);
  if (endSec < startSec) {
    [startSec, endSec] = [endSec, startSec];
    [stdName, dstName] = [dstName, stdName];
    [stdOffset, dstOffset] = [dstOffset, stdOffset];
  }
  if (ysec < startSec) return { name: stdName, offset: stdOffset, start: yearStart, end: yearStart + startSec };
  if (ysec >= endSec) return { name: stdName, offset: stdOffset, start: yearStart + endSec, end: yearStart + 365 * SECONDS_PER_DAY };
  return { name: dstName, offset: dstOffset, start: yearStart + startSec, end: yearStart + endSec };
}

function yearOfDays(days: number): number {
  let y = Math.floor(days / 365.2425) + 1970;
  while (daysFromCivil(y, 1, 1) > days) y--;
  while (daysFromCivil(y + 1, 1, 1) <= days) y++;
  return y;
}

function parseTz(s: string): ParsedTz | undefined {
  const cur = { s };
  const stdName = tzName(cur);
  if (stdName === undefined) return undefined;
  const so = tzOffset(cur);
  if (so === undefined) return undefined;
  const stdOffset = -so;
  if (cur.s === "" || cur.s[0] === ",") return { stdName, stdOffset };
  const dstName = tzName(cur);
  if (dstName === undefined) return undefined;
  let dstOffset = stdOffset + 3600;
  if (cur.s !== "" && cur.s[0] !== ",") {
    const d = tzOffset(cur);
    if (d === undefined) return undefined;
    dstOffset = -d;
  }
  if (cur.s === "") cur.s = ",M3.2.0,M11.1.0";
  if (cur.s[0] !== "," && cur.s[0] !== ";") return undefined;
  cur.s = cur.s.slice(1);
  const start = tzRule(cur);
  if (!start || cur.s[0] !== ",") return undefined;
  cur.s = cur.s.slice(1);
  const end = tzRule(cur);
  if (!end || cur.s !== "") return undefined;
  return { stdName, stdOffset, dst: { name: dstName, offset: dstOffset, start, end } };
}

function tzName(cur: { s: string }): string | undefined {
  const s = cur.s;
  if (s === "") return undefined;
  if (s[0] === "<") {
    const i = s.indexOf(">");
    if (i < 0) return undefined;
    cur.s = s.slice(i + 1);
    return s.slice(1, i);
  }
  for (let i = 0; i < s.length; i++) {
    if ("0123456789,-+".includes(s[i]!)) {
      if (i < 3) return undefined;
      cur.s = s.slice(i);
      return s.slice(0, i);
    }
  }
  if (s.length < 3) return undefined;
  cur.s = "";
  return s;
}

function tzNum(cur: { s: string }, min: number, max: number): number | undefined {
  const s = cur.s;
  let num = 0;
  let i = 0;
  for (; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 48 || c > 57) break;
    num = num * 10 + c - 48;
    if (num > max) return undefined;
  }
  if (i === 0 || num < min) return undefined;
  cur.s = s.slice(i);
  return num;
}

function tzOffset(cur: { s: string }): number | undefined {
  if (cur.s === "") return undefined;
  let neg = false;
  if (cur.s[0] === "+") cur.s = cur.s.slice(1);
  else if (cur.s[0] === "-") (cur.s = cur.s.slice(1)), (neg = true);
  const h = tzNum(cur, 0, 24 * 7);
  if (h === undefined) return undefined;
  let off = h * 3600;
  if (cur.s[0] === ":") {
    cur.s = cur.s.slice(1);
    const m = tzNum(cur, 0, 59);
    if (m === undefined) return undefined;
    off += m * 60;
    if (cur.s[0] === ":") {
      cur.s = cur.s.slice(1);
      const sec = tzNum(cur, 0, 59);
      if (sec === undefined) return undefined;
      off += sec;
    }
  }
  return neg ? -off : off;
}

function tzRule(cur: { s: string }): Rule | undefined {
  const r: Rule = { kind: "D", day: 0, week: 0, mon: 0, time: 7200 };
  if (cur.s === "") return undefined;
  if (cur.s[0] === "J") {
    cur.s = cur.s.slice(1);
    const d = tzNum(cur, 1, 365);
    if (d === undefined) return undefined;
    (r.kind = "J"), (r.day = d);
  } else if (cur.s[0] === "M") {
    cur.s = cur.s.slice(1);
    const mon = tzNum(cur, 1, 12);
    if (mon === undefined || cur.s[0] !== ".") return undefined;
    cur.s = cur.s.slice(1);
    const week = tzNum(cur, 1, 5);
    if (week === undefined || cur.s[0] !== ".") return undefined;
    cur.s = cur.s.slice(1);
    const day = tzNum(cur, 0, 6);
    if (day === undefined) return undefined;
    (r.kind = "M"), (r.day = day), (r.week = week), (r.mon = mon);
  } else {
    const d = tzNum(cur, 0, 365);
    if (d === undefined) return undefined;
    r.day = d;
  }
  if (cur.s[0] !== "/") return r;
  cur.s = cur.s.slice(1);
  const t = tzOffset(cur);
  if (t === undefined) return undefined;
  r.time = t;
  return r;
}

/** Seconds since the start of `year` (UTC) at which rule `r` fires, for a zone at offset `off`. */
function ruleTime(year: number, r: Rule, off: number): number {
  let s: number;
  if (r.kind === "J") {
    s = (r.day - 1) * SECONDS_PER_DAY;
    if (isLeap(year) && r.day >= 60) s += SECONDS_PER_DAY;
  } else if (r.kind === "D") {
    s = r.day * SECONDS_PER_DAY;
  } else {
    // Zeller's congruence: day of week of the first of r.mon.
    const m1 = ((r.mon + 9) % 12) + 1;
    const yy0 = r.mon <= 2 ? year - 1 : year;
    const yy1 = Math.trunc(yy0 / 100);
    const yy2 = yy0 % 100;
    let dow = (Math.trunc((26 * m1 - 2) / 10) + 1 + yy2 + Math.trunc(yy2 / 4) + Math.trunc(yy1 / 4) - 2 * yy1) % 7;
    if (dow < 0) dow += 7;
    let d = r.day - dow;
    if (d < 0) d += 7;
    for (let i = 1; i < r.week; i++) {
      if (d + 7 >= daysIn(r.mon, year)) break;
      d += 7;
    }
    d += DAYS_BEFORE[r.mon - 1]!;
    if (isLeap(year) && r.mon > 2) d++;
    s = d * SECONDS_PER_DAY;
  }
  return s + r.time - off;
}
