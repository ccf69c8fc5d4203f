/**
 * The internal `inc_*` functions of eKuiper's incremental window rewrite (functions.md §1.3):
 * scalar calls that keep a running aggregate in their call-site state. floe's own incremental
 * windows use FuncDef.accumulator instead; these exist so the names resolve as in eKuiper.
 */
import { RowError } from "../errors.ts";
import { isObj, toFloatAll, type Value } from "../value/values.ts";
import { MergeFold } from "./agg-collect.ts";
import { NumFold } from "./agg-fold.ts";
import { arity, register, type CallCtx, type FuncDef } from "./registry.ts";

function stateOf<T>(ctx: CallCtx, init: () => T): T {
  return (ctx.state ??= init()) as T;
}

class Running {
  count = 0;
  sum = 0;
}

function extreme(name: "inc_max" | "inc_min", op: "max" | "min"): FuncDef {
  return {
    name,
    kind: "scalar",
    validate: arity(1),
    policy: "N",
    exec: (args, ctx) => {
      const f = stateOf(ctx, () => new NumFold(op));
      f.push(args[0]!);
      return f.value();
    },
  };
}

register(
  {
    name: "inc_count",
    kind: "scalar",
    validate: arity(1),
    policy: "N",
    exec: (_args, ctx) => BigInt(++stateOf(ctx, () => new Running()).count),
  },
  {
    name: "inc_sum",
    kind: "scalar",
    validate: arity(1),
    policy: "N",
    exec: (args, ctx) => (stateOf(ctx, () => new Running()).sum += toFloatAll(args[0]!)),
  },
  {
    name: "inc_avg",
    kind: "scalar",
    validate: arity(1),
    policy: "N",
    exec: (args, ctx) => {
      const s = stateOf(ctx, () => new Running());
      s.sum += toFloatAll(args[0]!);
      s.count++;
      return s.sum / s.count;
    },
  },
  extreme("inc_max", "max"),
  extreme("inc_min", "min"),
  {
    name: "inc_merge_agg",
    kind: "scalar",
    validate: arity(1),
    policy: "N",
    exec: (args, ctx) => {
      const v = args[0]!;
      if (!isObj(v)) throw new RowError("argument is not a map[string]interface{}");
      const f = stateOf(ctx, () => new MergeFold());
      f.push(v);
      return f.value();
    },
  },
  {
    name: "inc_collect",
    kind: "scalar",
    validate: arity(1),
    policy: "N",
    exec: (args, ctx) => {
      const items = stateOf<Value[]>(ctx, () => []);
      items.push(args[0]!);
      return items.slice();
    },
  },
  {
    name: "inc_last_value",
    kind: "scalar",
    validate: arity(2),
    policy: "N",
    // The null pre-check already dropped null values, so the last value is this one.
    exec: (args) => {
      if (typeof args[1] !== "boolean") throw new RowError("second argument is not a bool");
      return args[0]!;
    },
  },
);

