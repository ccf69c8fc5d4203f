/**
 * Differential test of the member-selective decoder (json-pick.ts) against the full decoder
 * (json-tuple.ts): on random lines — escapes, unicode, big integers, -0, exponents, duplicate and
 * escaped keys, whitespace, nested values, invalid lines — the picked row must be exactly the full
 * decoder's row restricted to the kept columns (same values, same number types, same key order),
 * and every line the full decoder rejects must be declined (so the error stays the full decoder's).
 */
import { describe, expect, test } from "bun:test";
import { decodeEnvelopeJson, decodeTupleJson } from "../../lib/formats/json-tuple.ts";
import { pickEnvelopeJson, pickTupleJson } from "../../lib/formats/json-pick.ts";
import type { Value } from "../../lib/value/values.ts";
import { prng as rng } from "../helpers/prng.ts";

const NUMBERS = [
  "0", "-0", "7", "-12", "20", "123456789012345", "1234567890123456", "9007199254740993", "-9007199254740993",
  "9223372036854775807", "-9223372036854775808", "9223372036854775808", "123456789012345678901234567890",
  "1.0", "-0.0", "0.5", "21.4", "1e3", "1E+2", "-2.5e-3", "1.000", "3.14159", "1e400", "-1e400",
];
const STRINGS = [
  '""', '"dev_1"', '"a\\"b"', '"back\\\\slash"', '"nl\\nx\\t\\r\\b\\f"', '"\\u00e9t\\u00E9"', '"\\ud83d\\ude00"',
  '"\\ud800"', '"é ü 中文"', '"😀"', '"\\/slash"', '"  spaced  "', '"{not json}"', '"[1,2]"', '"\u2028"',
];
const KEYS = ["id", "device", "temp", "speed", "ts", "extra", "__proto__", "t\\u0065mp", "", "é", "a b", "nested"];
const WS = ["", "", "", " ", "  ", "\t", "\n", "\r\n", " \t "];

function gen(r: () => number, depth: number): string {
  const pick = <T>(a: T[]) => a[Math.floor(r() * a.length)]!;
  const k = r();
  if (depth > 2 || k < 0.35) return pick(NUMBERS);
  if (k < 0.6) return pick(STRINGS);
  if (k < 0.7) return pick(["true", "false", "null"]);
  if (k < 0.85) return obj(r, depth + 1);
  const n = Math.floor(r() * 4);
  const items: string[] = [];
  for (let i = 0; i < n; i++) items.push(pick(WS) + gen(r, depth + 1) + pick(WS));
  return `[${items.join(",")}]`;
}

function obj(r: () => number, depth: number): string {
  const pick = <T>(a: T[]) => a[Math.floor(r() * a.length)]!;
  const n = Math.floor(r() * 7);
  const members: string[] = [];
  for (let i = 0; i < n; i++) members.push(`${pick(WS)}"${pick(KEYS)}"${pick(WS)}:${pick(WS)}${gen(r, depth)}${pick(WS)}`);
  return `{${members.join(",")}}`;
}

const BREAKERS = ["", "x", ",", "}", "{", '"', "\\", "01", ".", "+1", "tru", "'", "\u0001", "NaN", ":", "]", "\u00a0", "\ufeff"];

/** Sometimes a valid line, sometimes one broken in a random place. */
function line(r: () => number): string {
  const s = `${WS[Math.floor(r() * WS.length)]}${obj(r, 0)}${WS[Math.floor(r() * WS.length)]}`;
  const k = r();
  if (k < 0.7) return s;
  const at = Math.floor(r() * (s.length + 1));
  const b = BREAKERS[Math.floor(r() * BREAKERS.length)]!;
  if (k < 0.8) return s.slice(0, at); // truncated
  if (k < 0.9) return s.slice(0, at) + b + s.slice(at); // inserted
  return s.slice(0, at) + b + s.slice(at + 1); // replaced
}

/** Strict equality of decoded values: number types, -0, key order. */
function same(a: Value | undefined, b: Value | undefined): boolean {
  if (typeof a !== typeof b) return false;
  if (typeof a === "number") return Object.is(a, b);
  if (a === null || b === null || typeof a !== "object") return a === b;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const ka = Object.keys(a as object);
  const kb = Object.keys(b as object);
  if (ka.length !== kb.length || ka.some((k, i) => k !== kb[i])) return false;
  return ka.every((k) => same((a as Record<string, Value>)[k], (b as Record<string, Value>)[k]));
}

function restrict(v: Value, keep: ReadonlySet<string>): Value {
  const o: Record<string, Value> = {};
  for (const k of Object.keys(v as object)) if (keep.has(k)) o[k] = (v as Record<string, Value>)[k]!;
  return o;
}

function full(text: string, keep: ReadonlySet<string>): { ok: true; v: Value } | { ok: false } {
  try {
    return { ok: true, v: decodeTupleJson(text, keep) };
  } catch {
    return { ok: false };
  }
}

const KEEPS: ReadonlySet<string>[] = [
  new Set(["id", "device", "temp", "speed"]),
  new Set(["temp"]),
  new Set(["ts", "nested", "é", "a b", ""]),
  new Set(["missing"]),
];

describe("json-pick against the full decoder", () => {
  test("tuple lines: same row restricted to the kept columns, or declined", () => {
    const r = rng(11);
    let picked = 0;
    let rejected = 0;
    for (let n = 0; n < 20000; n++) {
      const text = line(r);
      const keep = KEEPS[n % KEEPS.length]!;
      const want = full(text, keep);
      const got = pickTupleJson(text, keep);
      if (!want.ok) rejected++;
      if (got === undefined) continue;
      picked++;
      if (!want.ok || want.v === null || typeof want.v !== "object" || Array.isArray(want.v)) throw new Error(`picked a line the full decoder rejects: ${JSON.stringify(text)}`);
      if (!same(got, restrict(want.v, keep))) throw new Error(`differs on ${JSON.stringify(text)}: ${String(Bun.inspect(got))} vs ${Bun.inspect(restrict(want.v, keep))}`);
    }
    // Not vacuous: most lines are picked and a good share of the random lines are invalid.
    expect(picked).toBeGreaterThan(8000);
    expect(rejected).toBeGreaterThan(3000);
  });

  test("replay envelopes: same ts, stream, raw, meta and pruned data, or declined", () => {
    const r = rng(7);
    let picked = 0;
    const keeps = new Map<string | undefined, ReadonlySet<string>>([
      [undefined, KEEPS[0]!],
      ["s2", KEEPS[2]!],
    ]);
    const keepFor = (stream: string | undefined) => keeps.get(stream) ?? KEEPS[1]!;
    const reused = {};
    for (let n = 0; n < 20000; n++) {
      const parts: string[] = [];
      const members = Math.floor(r() * 6);
      for (let i = 0; i < members; i++) {
        const k = r();
        if (k < 0.3) parts.push(`"data":${line(r)}`);
        else if (k < 0.45) parts.push(`"ts":${[`${1700000000000 + n}`, "1.5", '"x"', "null", "12345678901234567890"][Math.floor(r() * 5)]}`);
        else if (k < 0.6) parts.push(`"stream":${['"s2"', '"other"', "3", '"s\\u0032"'][Math.floor(r() * 4)]}`);
        else if (k < 0.7) parts.push(`"meta":${gen(r, 1)}`);
        else if (k < 0.8) parts.push(`"raw":${['"MjEuNA=="', "7", '"a\\nb"'][Math.floor(r() * 3)]}`);
        else parts.push(`"${KEYS[Math.floor(r() * KEYS.length)]}":${gen(r, 1)}`);
      }
      const text = r() < 0.05 ? `[${parts.join(",")}]` : `{${parts.join(",")}}`;
      let want: Record<string, Value> | undefined;
      try {
        const v = decodeEnvelopeJson(text, keepFor);
        if (v !== null && typeof v === "object" && !Array.isArray(v)) want = v as Record<string, Value>;
      } catch {
        want = undefined;
      }
      // Every other line is written into one reused envelope: nothing of an earlier line may remain.
      const got = n % 2 ? pickEnvelopeJson(text, keepFor, reused) : pickEnvelopeJson(text, keepFor);
      if (got === undefined) continue;
      picked++;
      if (!want) throw new Error(`picked an envelope the full decoder rejects: ${text}`);
      const stream = typeof want.stream === "string" ? want.stream : undefined;
      const ts = typeof want.ts === "bigint" || typeof want.ts === "number" ? Number(want.ts) : undefined;
      const raw = typeof want.raw === "string" ? want.raw : undefined;
      const data = want.data === undefined ? undefined : restrict(want.data, keepFor(stream));
      const ok = same(got.ts, ts) && got.stream === stream && got.raw === raw && same(got.meta, want.meta) && same(got.data, data);
      if (!ok) throw new Error(`differs on ${text}: ${Bun.inspect(got)} vs ${Bun.inspect({ ts, stream, raw, meta: want.meta, data })}`);
    }
    expect(picked).toBeGreaterThan(4000);
  });

  test("declines what it cannot answer exactly", () => {
    const keep = new Set(["temp"]);
    expect(pickTupleJson('{"t\\u0065mp":1}', keep)).toBeUndefined(); // escaped key
    expect(pickTupleJson("[1]", keep)).toBeUndefined(); // not an object
    expect(pickTupleJson('{"temp":1} x', keep)).toBeUndefined(); // trailing text
    expect(pickTupleJson(`{"temp":${"[".repeat(250)}${"]".repeat(250)}}`, keep)).toBeUndefined(); // near the depth limit
    expect(pickEnvelopeJson('{"data":[{"temp":1}]}', () => keep)).toBeUndefined(); // data is an array
    expect(pickEnvelopeJson('{"data":{"temp":1}}', () => null)).toBeUndefined(); // the rule reads `*`
  });

  test("decimal fractions read by hand round as Number() does", () => {
    const r = rng(3);
    const keep = new Set(["a"]);
    for (let n = 0; n < 50000; n++) {
      const whole = Math.floor(r() * 4) === 0 ? "0" : String(Math.floor(r() * 10 ** Math.floor(r() * 10)));
      let frac = "";
      for (let k = Math.floor(r() * 14) + 1; k > 0; k--) frac += Math.floor(r() * 10);
      const text = `${r() < 0.3 ? "-" : ""}${whole}.${frac}`;
      const got = pickTupleJson(`{"a":${text}}`, keep)!.a;
      if (!Object.is(got, Number(text))) throw new Error(`${text}: ${String(got)} vs ${Number(text)}`);
    }
  });

  test("number typing of kept members", () => {
    const keep = new Set(["a", "b", "c", "d", "e", "f"]);
    const got = pickTupleJson('{"a":1,"b":1.0,"c":-0,"d":9223372036854775807,"e":9223372036854775808,"f":1e2,"g":2}', keep)!;
    expect(got).toEqual({ a: 1n, b: 1, c: 0n, d: 9223372036854775807n, e: 9223372036854775808, f: 100 });
    expect(typeof got.b).toBe("number");
    expect("g" in got).toBe(false);
  });
});
