/**
 * Date and time functions (functions §7.3, plus `convert_tz` and `to_seconds` of §12.2).
 * "Now" is the engine clock `ctx.env.now()` in the configured zone `ctx.env.zone`.
 */
import { RowError } from "../errors.ts";
import { daysFromCivil } from "../value/civil.ts";
import {
  civil, DateTime, Duration, formatGoLayout, formatPattern, fromUnix, loadLocation,
  parseGoDuration, toTime, UTC,
} from "../value/time.ts";
import { toIntStrict, toStr, typeValue, type Value } from "../value/values.ts";
import {
  alias, arity, DATETIME, expectArgs, expectType, isIntegerLit, isStringLit, notDatetime, register,
  STRING, validateArgs, type CallCtx, type Exec, type Validator,
} from "./registry.ts";

const DATE_TIME = "2006-01-02 15:04:05";
const DATE = "2006-01-02";
const LONG_DAY_NAMES = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"];
const LONG_MONTH_NAMES = [
  "January", "February", "March", "April", "May", "June",
  "July", "August", "September", "October", "November", "December",
];

/** `toTime` of an argument in the configured zone, with the engine clock for missing date parts. */
function timeArg(v: Value, ctx: CallCtx): DateTime {
  return toTime(v, ctx.env.zone, undefined, ctx.env.now());
}

function nowTime(ctx: CallCtx): DateTime {
  return new DateTime(ctx.env.now(), 0, ctx.env.zone);
}

/**
 * `now([fsp])`: `yyyy-MM-dd HH:mm:ss`, plus `.` and fsp (1..6) fractional digits. eKuiper crashes
 * on fsp (an int/int64 type assertion); floe appends the digits as the function documents.
 */
function nowWithFsp(args: Value[], ctx: CallCtx): string {
  const t = nowTime(ctx);
  let s = formatGoLayout(t, DATE_TIME);
  const fsp = args.length > 0 && typeof args[0] === "bigint" ? Number(args[0]) : 0;
  if (fsp > 0 && fsp <= 6) {
    const micros = Math.floor(civil(t).nanos / 1000);
    s += "." + String(micros).padStart(6, "0").slice(0, fsp);
  }
  return s;
}

/** `now`/`cur_time`: at most one argument, an integer literal. */
const validateFsp: Validator = (args) => {
  if (args.length > 1) return "too many arguments";
  if (args.length === 1 && !isIntegerLit(args[0]!)) return expectType("int", 1);
  return undefined;
};

/** One datetime-ish argument (D1), reporting parameter `k` on a literal of the wrong kind. */
function d1(k = 1): Validator {
  return (args) => {
    if (args.length !== 1) return expectArgs(1, args.length);
    return notDatetime(args[0]!) ? expectType("datetime", k) : undefined;
  };
}

/** Two arguments; both datetime-ish, the second reporting `parameter 1` like eKuiper. */
const validateDateDiff: Validator = (args) => {
  if (args.length !== 2) return expectArgs(2, args.length);
  if (notDatetime(args[0]!) || notDatetime(args[1]!)) return expectType("datetime", 1);
  return undefined;
};

const validateDateCalc: Validator = (args) => {
  if (args.length !== 2) return expectArgs(2, args.length);
  if (notDatetime(args[0]!)) return expectType("datetime", 1);
  if (!isStringLit(args[1]!)) return expectType("string", 2);
  return undefined;
};

const INT_ARG = ["int", notDatetime] as const;

/** A D1 function computing an int from the time's calendar fields. */
function field(name: string, get: (dt: DateTime) => number): void {
  register({ name, kind: "scalar", validate: d1(), exec: (args, ctx) => BigInt(get(timeArg(args[0]!, ctx))) });
}

function scalar(name: string, validate: Validator, exec: Exec, policy?: "N"): void {
  register(policy ? { name, kind: "scalar", validate, exec, policy } : { name, kind: "scalar", validate, exec });
}

/** Nanoseconds since the epoch of a DateTime, exactly. */
function totalNs(t: DateTime): bigint {
  return BigInt(t.ms) * 1_000_000n + BigInt(t.ns);
}

/** A DateTime from nanoseconds since the epoch. */
function fromNs(ns: bigint, zone: DateTime["zone"]): DateTime {
  let sec = ns / 1_000_000_000n;
  let rem = ns % 1_000_000_000n;
  if (rem < 0n) (rem += 1_000_000_000n), (sec -= 1n);
  return fromUnix(Number(sec), Number(rem), zone);
}

const MAX_DURATION = (1n << 63n) - 1n;
const MIN_DURATION = -(1n << 63n);

/** Go `cast.ToString(x, CONVERT_SAMEKIND)`: strings and bytes only. */
function toStringSame(v: Value): string {
  if (typeof v === "string") return v;
  if (v instanceof Uint8Array) return new TextDecoder().decode(v);
  throw new RowError(`cannot convert ${typeValue(v)} to string`);
}

scalar("now", validateFsp, nowWithFsp);
alias("current_timestamp", "now");
alias("local_time", "now");
alias("local_timestamp", "now");

scalar("cur_date", arity(0), (_args, ctx) => formatGoLayout(nowTime(ctx), DATE));
alias("current_date", "cur_date");

scalar("cur_time", validateFsp, (args, ctx) => {
  const s = nowWithFsp(args, ctx);
  return s.slice(s.indexOf(" ") + 1);
});
alias("current_time", "cur_time");

scalar(
  "format_time",
  validateArgs(2, [DATETIME, STRING]),
  (args, ctx) => formatPattern(timeArg(args[0]!, ctx), toStr(args[1]!)),
  "N",
);

scalar("date_calc", validateDateCalc, (args, ctx) => {
  const t = timeArg(args[0]!, ctx);
  const d = parseGoDuration(toStringSame(args[1]!));
  return formatGoLayout(fromNs(totalNs(t) + d, t.zone), DATE_TIME);
});

scalar("date_diff", validateDateDiff, (args, ctx) => {
  const t1 = timeArg(args[0]!, ctx);
  const t2 = timeArg(args[1]!, ctx);
  const d = totalNs(t2) - totalNs(t1);
  // Go's Time.Sub saturates instead of overflowing.
  return new Duration(d > MAX_DURATION ? MAX_DURATION : d < MIN_DURATION ? MIN_DURATION : d);
});

scalar("day_name", d1(), (args, ctx) => LONG_DAY_NAMES[civil(timeArg(args[0]!, ctx)).weekday]!);
field("day_of_month", (t) => civil(t).day);
alias("day", "day_of_month");
// eKuiper returns a time.Weekday; floe returns a plain int (documented deviation, functions §7.3).
field("day_of_week", (t) => civil(t).weekday);
field("day_of_year", (t) => {
  const c = civil(t);
  return daysFromCivil(c.year, c.month, c.day) - daysFromCivil(c.year, 1, 1) + 1;
});
field("hour", (t) => civil(t).hour);
field("minute", (t) => civil(t).minute);
field("second", (t) => civil(t).second);
field("microsecond", (t) => Math.floor(civil(t).nanos / 1000));
field("month", (t) => civil(t).month);
scalar("month_name", d1(2), (args, ctx) => LONG_MONTH_NAMES[civil(timeArg(args[0]!, ctx)).month - 1]!);

scalar("last_day", d1(), (args, ctx) => {
  const c = civil(timeArg(args[0]!, ctx));
  // Day 0 of the next month is the last day of this one (Go's time.Date normalisation).
  const days = daysFromCivil(c.year, c.month + 1, 0);
  return formatGoLayout(fromUnix(days * 86400, 0, UTC), DATE);
});

scalar(
  "from_days",
  validateArgs(1, [INT_ARG]),
  (args) => {
    const n = toIntStrict(args[0]!);
    if (n === 0n) return null;
    // Go: time.Unix(0, 0).Add(time.Duration(days-1) * 24 * time.Hour), int64 arithmetic wrapping.
    const d = BigInt.asIntN(64, BigInt.asIntN(64, BigInt.asIntN(64, n - 1n) * 24n) * 3_600_000_000_000n);
    // eKuiper formats in the system zone of the epoch; floe uses UTC as the spec recommends.
    return formatGoLayout(fromNs(d, UTC), DATE);
  },
  "N",
);

scalar(
  "from_unix_time",
  validateArgs(1, [INT_ARG]),
  (args, ctx) => {
    const s = toIntStrict(args[0]!);
    if (s === 0n) return null;
    return formatGoLayout(fromUnix(Number(s), 0, ctx.env.zone), DATE_TIME);
  },
  "N",
);

scalar(
  "convert_tz",
  validateArgs(2, [DATETIME, STRING]),
  (args, ctx) => {
    const t = timeArg(args[0]!, ctx);
    const zone = loadLocation(toStringSame(args[1]!));
    return new DateTime(t.ms, t.ns, zone);
  },
  "N",
);

scalar("to_seconds", arity(1), (args, ctx) => BigInt(Math.floor(timeArg(args[0]!, ctx).ms / 1000)), "N");
