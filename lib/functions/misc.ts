/**
 * Miscellaneous functions (functions.md §12.2, §2): newuuid, tstamp, rule_id, rule_start, props,
 * delay, get_keyed_state, bypass, and the hit-state functions compiled by the engine.
 */
import { RowError } from "../errors.ts";
import { fmtV, toIntSame, type Value } from "../value/values.ts";
import { castTo } from "./convert.ts";
import {
  arity,
  expectArgs,
  expectType,
  isBooleanish,
  isNumericLit,
  isTimeLit,
  NUMBER,
  register,
  STRING,
  validateArgs,
  type Validator,
} from "./registry.ts";

// ---------------------------------------------------------------------------------------------
// newuuid: RFC 4122 version 1 like eKuiper, with a random node id (multicast bit set, as RFC 4122
// §4.5 asks for a node that is not a MAC address).

const GREGORIAN_OFFSET = 122192928000000000n; // 100 ns intervals from 1582-10-15 to 1970-01-01
const uuidNode = crypto.getRandomValues(new Uint8Array(6));
uuidNode[0]! |= 0x01;
const uuidClockSeq = crypto.getRandomValues(new Uint16Array(1))[0]! & 0x3fff;
let uuidLast = 0n;

function hex(n: bigint | number, width: number): string {
  return n.toString(16).padStart(width, "0");
}

/** A version-1 UUID at epoch `ms`; distinct even when the (virtual) clock stands still. */
export function uuidV1(ms: number): string {
  let t = BigInt(ms) * 10000n + GREGORIAN_OFFSET;
  if (t <= uuidLast) t = uuidLast + 1n;
  uuidLast = t;
  const low = t & 0xffffffffn;
  const mid = (t >> 32n) & 0xffffn;
  const hi = ((t >> 48n) & 0x0fffn) | 0x1000n;
  const seq = uuidClockSeq | 0x8000;
  let node = "";
  for (const b of uuidNode) node += hex(b, 2);
  return `${hex(low, 8)}-${hex(mid, 4)}-${hex(hi, 4)}-${hex(seq, 4)}-${node}`;
}

// ---------------------------------------------------------------------------------------------
// props: `KUIPER_PROPS_<NAME>` environment variables captured at start-up.

const PROPS_PREFIX = "KUIPER_PROPS_";
const envProps = new Map<string, string>();
for (const [k, v] of Object.entries(process.env)) {
  if (k.startsWith(PROPS_PREFIX) && v !== undefined) envProps.set(k.slice(PROPS_PREFIX.length).toLowerCase(), v);
}

const SNOWFLAKE_EPOCH = 1288834974657n;
let snowLast = -1n;
let snowSeq = 0n;

/** bwmarrin/snowflake with node 1; the sequence overflowing borrows the next millisecond. */
export function snowflake(ms: number): string {
  let t = BigInt(ms) - SNOWFLAKE_EPOCH;
  if (t < snowLast) t = snowLast;
  if (t === snowLast) {
    snowSeq = (snowSeq + 1n) & 4095n;
    if (snowSeq === 0n) t = snowLast + 1n;
  } else snowSeq = 0n;
  snowLast = t;
  return ((t << 22n) | (1n << 12n) | snowSeq).toString();
}

// ---------------------------------------------------------------------------------------------
// get_keyed_state: the external keyed-state store is wired in by the engine.

/** Reads a key of the external keyed-state store; undefined when missing or unreadable. */
export type KeyedStateReader = (key: string) => Value | undefined;
let keyedState: KeyedStateReader = () => undefined;

/** Installs the reader `get_keyed_state` uses (eKuiper's `extState` store). */
export function setKeyedStateReader(reader: KeyedStateReader): void {
  keyedState = reader;
}

const KEYED_TYPES = new Set(["bigint", "float", "string", "boolean", "datetime"]);

const validateKeyedState: Validator = (args) => {
  if (args.length !== 3) return expectArgs(3, args.length);
  const t = args[1]!;
  if (isNumericLit(t) || isTimeLit(t) || isBooleanish(t)) return expectType("string", 1);
  if (t.kind === "string" && !KEYED_TYPES.has(t.value)) {
    return "expect one of following value for the 2nd parameter: bigint, float, string, boolean, datetime";
  }
  return undefined;
};

// A blocking sleep: eKuiper's delay holds the operator, so later rows wait behind it.
const sleepCell = new Int32Array(new SharedArrayBuffer(4));

const noArgs = arity(0);

register(
  { name: "newuuid", kind: "scalar", validate: noArgs, exec: (_a, ctx) => uuidV1(ctx.env.now()) },
  { name: "tstamp", kind: "scalar", validate: noArgs, exec: (_a, ctx) => BigInt(ctx.env.now()) },
  { name: "rule_id", kind: "scalar", validate: noArgs, exec: (_a, ctx) => ctx.env.ruleId },
  { name: "rule_start", kind: "scalar", validate: noArgs, exec: (_a, ctx) => BigInt(ctx.env.ruleStart) },
  {
    name: "props",
    kind: "scalar",
    validate: validateArgs(1, [STRING]),
    policy: "N",
    exec: (args, ctx) => {
      const name = args[0]!;
      if (typeof name !== "string") {
        throw new RowError(`invalid input ${fmtV(name)}: must be property name of string type`);
      }
      if (name === "et") return String(ctx.env.now());
      if (name === "snowflake") return snowflake(ctx.env.now());
      const v = envProps.get(name);
      if (v === undefined) throw new RowError(""); // eKuiper's error has an empty text [quirk]
      return v;
    },
  },
  {
    name: "delay",
    kind: "scalar",
    validate: validateArgs(2, [NUMBER]),
    policy: "N",
    exec: (args) => {
      const ms = toIntSame(args[0]!);
      if (ms > 0n) Atomics.wait(sleepCell, 0, 0, Number(ms));
      return args[1]!;
    },
  },
  {
    name: "get_keyed_state",
    kind: "scalar",
    validate: validateKeyedState,
    exec: (args, ctx) => {
      const key = args[0]!;
      if (typeof key !== "string") throw new RowError(`key ${fmtV(key)} is not a string`);
      const v = keyedState(key);
      return v === undefined ? args[2]! : castTo(v, args[1]!, ctx);
    },
  },
  // Internal planner target: never skips on null.
  { name: "bypass", kind: "scalar", exec: (args) => args[0] ?? null },
  // Hit-state functions (§2): the engine owns their state and compiles them itself.
  { name: "last_hit_count", kind: "special", validate: noArgs },
  { name: "last_hit_time", kind: "special", validate: noArgs },
  { name: "last_agg_hit_count", kind: "special", validate: noArgs },
  { name: "last_agg_hit_time", kind: "special", validate: noArgs },
);
