/** collect, merge_agg, last_value and deduplicate (functions.md §1.2). */
import { RowError } from "../errors.ts";
import { fmtV, isObj, typeValue, type Obj, type Value } from "../value/values.ts";
import { runFold, type Fold } from "./agg-fold.ts";
import { arity, expectArgs, expectType, isBooleanish, register, type Accumulator, type Validator } from "./registry.ts";

/** Sets a member without tripping over the `__proto__` accessor. */
export function setMember(o: Obj, k: string, v: Value): void {
  if (k === "__proto__") Object.defineProperty(o, k, { value: v, enumerable: true, writable: true, configurable: true });
  else o[k] = v;
}

/** Every per-row value, nulls included; an empty group is null (eKuiper: a nil array). */
class CollectFold implements Fold {
  items: Value[] = [];
  add(args: Value[]): void {
    this.items.push(args[0]!);
  }
  push(v: Value): void {
    this.items.push(v);
  }
  value(): Value {
    return this.items.length === 0 ? null : this.items.slice();
  }
  snapshot(): unknown {
    return this.items;
  }
  restore(s: unknown): void {
    for (const v of s as Value[]) this.items.push(v);
  }
  reset(): void {
    this.items = [];
  }
}

/** Objects merged in row order (later keys win); other values ignored; nothing merged → null. */
export class MergeFold implements Fold {
  // A null prototype keeps keys such as `__proto__` or `toString` ordinary members.
  private merged: Obj = Object.create(null) as Obj;
  add(args: Value[]): void {
    this.push(args[0]!);
  }
  push(v: Value): void {
    if (!isObj(v)) return;
    for (const k in v) this.merged[k] = v[k]!;
  }
  value(): Value {
    let out: Obj | null = null;
    for (const k in this.merged) setMember((out ??= {}), k, this.merged[k]!);
    return out;
  }
  snapshot(): unknown {
    // As key/value pairs: the merged keys may include `__proto__`.
    const pairs: [string, Value][] = [];
    for (const k in this.merged) pairs.push([k, this.merged[k]!]);
    return pairs;
  }
  restore(s: unknown): void {
    for (const [k, v] of s as [string, Value][]) this.merged[k] = v;
  }
  reset(): void {
    this.merged = Object.create(null) as Obj;
  }
}

/** `last_value(x, ignoreNull)`: the flag is the first non-null value of the second argument. */
class LastValueAccumulator implements Accumulator {
  private rows = 0;
  private flag: Value = null;
  private last: Value = null;
  private lastNonNull: Value = null;
  add(args: Value[]): void {
    this.push(args[0]!, args[1]!);
  }
  push(v: Value, flag: Value): void {
    this.rows++;
    if (this.flag === null) this.flag = flag;
    this.last = v;
    if (v !== null) this.lastNonNull = v;
  }
  value(): Value {
    if (this.rows === 0) return null;
    if (typeof this.flag !== "boolean") {
      throw new RowError(`the second parameter requires bool but found ${typeValue(this.flag)}`);
    }
    return this.flag && this.lastNonNull !== null ? this.lastNonNull : this.last;
  }
  snapshot(): unknown {
    return [this.rows, this.flag, this.last, this.lastNonNull];
  }
  restore(s: unknown): void {
    [this.rows, this.flag, this.last, this.lastNonNull] = s as [number, Value, Value, Value];
  }
  reset(): void {
    this.rows = 0;
    this.flag = null;
    this.last = null;
    this.lastNonNull = null;
  }
}

/**
 * `deduplicate(x, all)` keyed by `fmtV(x)`. The engine passes a third array holding the group's
 * row objects (eKuiper appends a hidden `*` argument); without it the values of x stand in.
 */
function deduplicate(args: Value[]): Value {
  const xs = args[0] as Value[];
  const rows = (args.length > 2 ? args[2] : xs) as Value[];
  const flags = args[1] as Value[];
  let all: Value = null;
  for (let i = 0; i < flags.length && all === null; i++) all = flags[i]!;
  if (typeof all !== "boolean" || rows.length === 0) throw new RowError("Invalid argument type found.");
  const seen = new Set<string>();
  if (all) {
    const out: Value[] = [];
    for (let i = 0; i < xs.length; i++) {
      const k = fmtV(xs[i]);
      if (seen.has(k)) continue;
      seen.add(k);
      out.push(rows[i]!);
    }
    return out;
  }
  const n = xs.length;
  const lastKey = fmtV(xs[n - 1]);
  for (let i = 0; i < n - 1; i++) if (fmtV(xs[i]) === lastKey) return null;
  return rows[n - 1]!;
}

/** last_value's and deduplicate's flag is a boolean literal or comparison: a column is refused, as by eKuiper. */
const validateFlagged: Validator = (args) => {
  if (args.length !== 2) return expectArgs(2, args.length);
  return isBooleanish(args[1]!) ? undefined : expectType("bool", 2);
};

register(
  {
    name: "collect",
    kind: "aggregate",
    validate: arity(1),
    incremental: true,
    exec: (args) => {
      const a = args[0] as Value[];
      return a.length === 0 ? null : a;
    },
    accumulator: () => new CollectFold(),
  },
  {
    name: "merge_agg",
    kind: "aggregate",
    validate: arity(1),
    policy: "N",
    incremental: true,
    exec: (args) => runFold(new MergeFold(), args[0] as Value[]),
    accumulator: () => new MergeFold(),
  },
  {
    name: "last_value",
    kind: "aggregate",
    validate: validateFlagged,
    policy: "N",
    incremental: true,
    exec: (args) => {
      const xs = args[0] as Value[];
      const flags = args[1] as Value[];
      const acc = new LastValueAccumulator();
      for (let i = 0; i < xs.length; i++) acc.push(xs[i]!, flags[i] ?? null);
      return acc.value();
    },
    accumulator: () => new LastValueAccumulator(),
  },
  {
    name: "deduplicate",
    kind: "aggregate",
    validate: validateFlagged,
    policy: "N",
    exec: deduplicate,
  },
);
