/** Math functions (functions.md §6); the float ones return Go's `math` results bit for bit. */
import { ErrorValue, RowError } from "../errors.ts";
import {
  floatToInt64,
  fmtV,
  int64,
  toFloatSame,
  toIntSame,
  typeValue,
  type Value,
} from "../value/values.ts";
import { goCot, goDegrees, goMod, goPow, goRadians, goRound, roundDigits } from "./math-go.ts";
import { goAcos, goAsin, goAtan, goAtan2 } from "./math-go-atan.ts";
import { goCosh, goExp, goLog, goLog10, goLogBase, goSinh, goTanh } from "./math-go-exp.ts";
import { goCos, goSin, goTan } from "./math-go-trig.ts";
import { conv } from "./math-conv.ts";
import {
  INT,
  NUMBER,
  alias,
  arity,
  expectArgs,
  expectType,
  notNumber,
  register,
  validateArgs,
  type Exec,
  type FuncDef,
  type Validator,
} from "./registry.ts";

const ONE_N = validateArgs(1, [NUMBER]);
const TWO_N = validateArgs(2, [NUMBER, NUMBER]);
const TWO_I = validateArgs(2, [INT, INT]);

/** `round`/`log`: one or two arguments, the listed ones number-checked. */
function oneOrTwo(checkSecond: boolean): Validator {
  return (args) => {
    if (args.length < 1 || args.length > 2) return "Expect 1 or 2 arguments only";
    if (notNumber(args[0]!)) return expectType(NUMBER[0], 1);
    if (checkSecond && args.length === 2 && notNumber(args[1]!)) return expectType(NUMBER[0], 2);
    return undefined;
  };
}

/** A float function of one number; a NaN result is returned as null. */
function float1(name: string, f: (x: number) => number): FuncDef {
  const exec: Exec = (args) => {
    const r = f(toFloatSame(args[0]!));
    return Number.isNaN(r) ? null : r;
  };
  return { name, kind: "scalar", validate: ONE_N, policy: "N", exec };
}

function float2(name: string, f: (x: number, y: number) => number, nanNull: boolean): FuncDef {
  const exec: Exec = (args) => {
    const r = f(toFloatSame(args[0]!), toFloatSame(args[1]!));
    return nanNull && Number.isNaN(r) ? null : r;
  };
  return { name, kind: "scalar", validate: TWO_N, policy: "N", exec };
}

const OPERAND = ["first", "second"] as const;

/** `toIntStrict` without the throw: ints, and floats holding an integer (Go `int(f)`). */
function strictInt(v: Value): bigint | undefined {
  if (typeof v === "bigint") return v;
  if (typeof v === "number" && Number.isInteger(v)) return floatToInt64(v);
  return undefined;
}

function operandError(which: string, v: Value): RowError {
  return new RowError(`Expect int type for the ${which} operand but got ${fmtV(v)}`);
}

function bitwise(name: string, f: (a: bigint, b: bigint) => bigint): FuncDef {
  const exec: Exec = (args) => {
    const a = strictInt(args[0]!);
    if (a === undefined) throw operandError(OPERAND[0], args[0]!);
    const b = strictInt(args[1]!);
    if (b === undefined) throw operandError(OPERAND[1], args[1]!);
    return f(a, b);
  };
  return { name, kind: "scalar", validate: TWO_I, policy: "N", exec };
}

function abs(args: Value[]): Value {
  const v = args[0]!;
  if (typeof v === "bigint") return int64(v < 0n ? -v : v);
  if (typeof v === "number") return Math.abs(v);
  throw new RowError("only float64 & int type are supported");
}

/** ln/log/sqrt report a NaN as an error *value* (no `call func` prefix). */
function positiveOnly(r: number, strictly: boolean, arg: Value): number {
  if (Number.isNaN(r)) {
    const what = strictly ? "a strictly positive" : "a positive";
    throw new ErrorValue(`The argument must be ${what} number but got ${fmtV(arg)}`);
  }
  return r;
}

function log(args: Value[]): Value {
  const a = toFloatSame(args[0]!);
  if (args.length === 1) return positiveOnly(goLog10(a), true, args[0]!);
  // Two arguments: the first is the base.
  const x = toFloatSame(args[1]!);
  return positiveOnly(goLogBase(a, x), true, args[0]!);
}

function round(args: Value[]): Value {
  const x = toFloatSame(args[0]!);
  if (args.length === 1) return goRound(x);
  const d = args[1]!;
  if (typeof d !== "bigint" && !(typeof d === "number" && Number.isFinite(d))) {
    throw new RowError(`The second argument must be an integer: cannot convert ${typeValue(d)} to int`);
  }
  return roundDigits(x, toIntSame(d));
}

function cot(args: Value[]): Value {
  const r = goCot(toFloatSame(args[0]!));
  if (Number.isNaN(r)) return null;
  if (!Number.isFinite(r)) throw new RowError("out-of-range error");
  return r;
}

function sign(args: Value[]): Value {
  const v = toFloatSame(args[0]!);
  return v > 0 ? 1n : v < 0 ? -1n : 0n;
}

function bitnot(args: Value[]): Value {
  const v = strictInt(args[0]!);
  if (v === undefined) throw new RowError(`Expect int type for operand but got ${fmtV(args[0])}`);
  return ~v;
}

const convValidate: Validator = (args) => {
  if (args.length !== 3) return expectArgs(3, args.length);
  if (args[1]!.kind !== "integer") return expectType("integer", 2);
  if (args[2]!.kind !== "integer") return expectType("integer", 3);
  return undefined;
};

register(
  { name: "abs", kind: "scalar", validate: ONE_N, policy: "N", exec: abs },
  float1("acos", goAcos),
  float1("asin", goAsin),
  float1("atan", goAtan),
  float2("atan2", goAtan2, true),
  bitwise("bitand", (a, b) => a & b),
  bitwise("bitor", (a, b) => a | b),
  bitwise("bitxor", (a, b) => a ^ b),
  { name: "bitnot", kind: "scalar", validate: validateArgs(1, [INT]), policy: "N", exec: bitnot },
  float1("ceiling", Math.ceil),
  float1("cos", goCos),
  float1("cosh", goCosh),
  float1("exp", goExp),
  float1("floor", Math.floor),
  {
    name: "ln",
    kind: "scalar",
    validate: ONE_N,
    policy: "N",
    exec: (args) => positiveOnly(goLog(toFloatSame(args[0]!)), true, args[0]!),
  },
  { name: "log", kind: "scalar", validate: oneOrTwo(false), policy: "N", exec: log },
  // fmod keeps the sign of x; y = 0 gives NaN, returned as is.
  float2("mod", goMod, false),
  { name: "pi", kind: "scalar", validate: arity(0), exec: () => Math.PI },
  float2("power", goPow, false),
  { name: "rand", kind: "scalar", validate: arity(0), exec: () => Math.random() },
  { name: "round", kind: "scalar", validate: oneOrTwo(true), policy: "N", exec: round },
  { name: "sign", kind: "scalar", validate: ONE_N, policy: "N", exec: sign },
  float1("sin", goSin),
  float1("sinh", goSinh),
  {
    name: "sqrt",
    kind: "scalar",
    validate: ONE_N,
    policy: "N",
    exec: (args) => positiveOnly(Math.sqrt(toFloatSame(args[0]!)), false, args[0]!),
  },
  float1("tan", goTan),
  float1("tanh", goTanh),
  { name: "cot", kind: "scalar", validate: ONE_N, policy: "N", exec: cot },
  float1("radians", goRadians),
  float1("degrees", goDegrees),
  { name: "conv", kind: "scalar", validate: convValidate, policy: "N", exec: conv },
);
alias("ceil", "ceiling");
alias("pow", "power");
