/**
 * Analytic functions (functions.md §3): lag, latest, changed_col, had_changed. State is per call
 * site and per partition (the engine keeps one `init()` result per partition key); `valid` is
 * false iff the call's `OVER (WHEN …)` evaluated to boolean false.
 */
import { RowError } from "../errors.ts";
import { fmtV, strictEqual, toIntStrict, type Value } from "../value/values.ts";
import type { Expr } from "../sql/ast.ts";
import {
  expectArgs,
  expectType,
  isBooleanish,
  isFieldRef,
  isFloatLit,
  isNumericLit,
  isStringLit,
  isTimeLit,
  register,
  type Validator,
} from "./registry.ts";
import "./analytic-acc.ts";

/** Numeric, time and string literals cannot be a boolean flag. */
function notFlag(e: Expr): boolean {
  return isNumericLit(e) || isTimeLit(e) || isStringLit(e);
}

const validateLag: Validator = (args) => {
  const l = args.length;
  if (l < 1 || l > 4) return `expect one two or three args but got ${l}`;
  if (l >= 2) {
    const o = args[1]!;
    if (isFloatLit(o) || isTimeLit(o) || isBooleanish(o) || isStringLit(o) || isFieldRef(o)) {
      return expectType("int", 2);
    }
    if (o.kind === "integer" && o.value < 0n) return "the index should not be a nagtive integer";
  }
  if (l === 4 && notFlag(args[3]!)) return expectType("bool", 4);
  return undefined;
};

/** A FIFO of `offset` slots, created at the partition's first row and prefilled with the default. */
interface LagState {
  q: Value[] | null;
  head: number;
}

function lagStep(args: Value[], valid: boolean, state: unknown): Value {
  const s = state as LagState;
  if (s.q === null) {
    let size = 1n;
    if (args.length >= 2) {
      try {
        size = toIntStrict(args[1]!);
      } catch (e) {
        const m = e instanceof RowError ? e.message : String(e);
        // eKuiper's message prints the first argument, not the offset it failed to convert.
        throw new RowError(`error converting second arg ${fmtV(args[0])} to int: ${m}`);
      }
    }
    const dft = args.length >= 3 ? args[2]! : null;
    s.q = new Array<Value>(size > 0n ? Number(size) : 0).fill(dft);
  }
  let ignoreNull = true;
  if (args.length === 4) {
    const f = args[3]!;
    if (typeof f !== "boolean") throw new RowError(`The fourth arg is not a bool but got ${fmtV(f)}`);
    ignoreNull = f;
  }
  const q = s.q;
  if (q.length === 0) return null;
  const out = q[s.head]!;
  const v = args[0]!;
  if (valid && !(ignoreNull && v === null)) {
    q[s.head] = v;
    s.head = s.head + 1 === q.length ? 0 : s.head + 1;
  }
  return out;
}

interface LatestState {
  v: Value;
  has: boolean;
}

interface ChangedState {
  v: Value;
}

interface HadChangedState {
  prev: Value[];
}

function boolFlag(v: Value): boolean {
  if (typeof v !== "boolean") throw new RowError(`first arg is not a bool but got ${fmtV(v)}`);
  return v;
}

register(
  {
    name: "lag",
    kind: "analytic",
    validate: validateLag,
    analytic: { init: (): LagState => ({ q: null, head: 0 }), step: lagStep },
  },
  {
    name: "latest",
    kind: "analytic",
    validate: (args) => (args.length < 1 || args.length > 2 ? `expect one or two args but got ${args.length}` : undefined),
    analytic: {
      init: (): LatestState => ({ v: null, has: false }),
      step(args, valid, state) {
        const s = state as LatestState;
        const v = args[0]!;
        if (valid && v !== null) {
          s.v = v;
          s.has = true;
          return v;
        }
        if (s.has) return s.v;
        return args.length === 2 ? args[1]! : null;
      },
    },
  },
  {
    name: "changed_col",
    kind: "analytic",
    validate: (args) => {
      if (args.length !== 2) return expectArgs(2, args.length);
      return notFlag(args[0]!) ? expectType("boolean", 1) : undefined;
    },
    analytic: {
      init: (): ChangedState => ({ v: null }),
      step(args, valid, state) {
        const ignoreNull = boolFlag(args[0]!);
        const v = args[1]!;
        if ((ignoreNull && v === null) || !valid) return null;
        const s = state as ChangedState;
        if (strictEqual(v, s.v)) return null;
        s.v = v;
        return v;
      },
    },
  },
  {
    name: "had_changed",
    kind: "analytic",
    validate: (args) => {
      if (args.length <= 1) return `expect more than one arg but got ${args.length}`;
      return notFlag(args[0]!) ? expectType("bool", 1) : undefined;
    },
    analytic: {
      init: (): HadChangedState => ({ prev: [] }),
      step(args, valid, state) {
        if (!valid) return false;
        const ignoreNull = boolFlag(args[0]!);
        const prev = (state as HadChangedState).prev;
        let changed = false;
        // Every argument is compared and stored: no short-circuit.
        for (let i = 1; i < args.length; i++) {
          const v = args[i]!;
          if (ignoreNull && v === null) continue;
          if (!strictEqual(v, prev[i] ?? null)) {
            changed = true;
            prev[i] = v;
          }
        }
        return changed;
      },
    },
  },
);
