/**
 * Codec of checkpointed operator state (rules-and-sinks.md §5): JSON with tags for what JSON
 * cannot say, so every value round-trips exactly — int64 (bigint), NaN/±Infinity/−0, bytes,
 * datetimes (with their zone), durations, `undefined` array slots, and the rows windows hold
 * (Tuple). Tags are one-key objects whose key starts with NUL, which no decoded JSON key carries.
 */
import { Tuple } from "../expr/row.ts";
import { DateTime, Duration, FixedZone, zoneByName, type Zone } from "../value/time.ts";

const INT = "\u0000i";
const FLOAT = "\u0000f";
const BYTES = "\u0000b";
const TIME = "\u0000t";
const DUR = "\u0000d";
const UNDEF = "\u0000u";
const TUPLE = "\u0000T";

function replacer(this: Record<string, unknown>, key: string, value: unknown): unknown {
  const orig = this[key];
  switch (typeof orig) {
    case "bigint":
      return { [INT]: orig.toString() };
    case "number":
      if (!Number.isFinite(orig) || Object.is(orig, -0)) return { [FLOAT]: Object.is(orig, -0) ? "-0" : String(orig) };
      return orig;
    case "undefined":
      // Array holes and undefined slots (an analytic cache not yet filled) stay undefined.
      return Array.isArray(this) ? { [UNDEF]: 1 } : undefined;
    case "object":
      if (orig === null) return null;
      if (orig instanceof Tuple) return { [TUPLE]: [orig.data, orig.meta, orig.ts, orig.emitter, orig.cache] };
      if (orig instanceof Uint8Array) return { [BYTES]: Buffer.from(orig.buffer, orig.byteOffset, orig.byteLength).toString("base64") };
      if (orig instanceof DateTime) return { [TIME]: [orig.ms, orig.ns, orig.zone.name, orig.zone.offsetAt(orig.ms)] };
      if (orig instanceof Duration) return { [DUR]: orig.ns.toString() };
      if (orig instanceof Map || orig instanceof Set) throw new Error("state codec: use arrays, not Map/Set, in snapshots");
      return value;
  }
  return value;
}

function zoneOf(name: string, offset: number, ms: number): Zone {
  const z = name === "" ? undefined : zoneByName(name);
  return z !== undefined && z.offsetAt(ms) === offset ? z : new FixedZone(name, offset);
}

function reviver(_key: string, value: unknown): unknown {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return value;
  const o = value as Record<string, unknown>;
  let tag: string | undefined;
  for (const k in o) {
    if (tag !== undefined || k.charCodeAt(0) !== 0) return value;
    tag = k;
  }
  const v = o[tag!];
  switch (tag) {
    case INT:
      return BigInt(v as string);
    case FLOAT:
      return v === "-0" ? -0 : Number(v);
    case BYTES:
      return new Uint8Array(Buffer.from(v as string, "base64"));
    case TIME: {
      const [ms, ns, zone, offset] = v as [number, number, string, number];
      return new DateTime(ms, ns, zoneOf(zone, offset, ms));
    }
    case DUR:
      return new Duration(BigInt(v as string));
    case UNDEF:
      return undefined;
    case TUPLE: {
      const [data, meta, ts, emitter, cache] = v as [Tuple["data"], Tuple["meta"], number, string, Tuple["cache"]];
      const t = new Tuple(data, meta, ts, emitter);
      t.cache = cache;
      return t;
    }
  }
  return value;
}

export function encodeState(state: unknown): string {
  return JSON.stringify(state, replacer);
}

export function decodeState(text: string): unknown {
  return JSON.parse(text, reviver) as unknown;
}
