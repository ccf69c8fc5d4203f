/**
 * Accumulate functions (functions.md §4): acc_sum, acc_min, acc_max, acc_avg, acc_count, in the
 * forms `acc_x(expr)` and `acc_x(expr, beginCond, resetCond)`. They accumulate for the rule's
 * lifetime, per call site and partition; an invalid row (`OVER (WHEN …)` false) changes nothing.
 */
import { RowError } from "../errors.ts";
import type { Value } from "../value/values.ts";
import { register, type FuncDef } from "./registry.ts";

type AccKind = "sum" | "min" | "max" | "avg" | "count";

class AccState {
  started = false;
  count = 0;
  sum = 0;
  /** min or max so far; meaningful when `count > 0`. */
  best = 0;
}

function notNumber(): RowError {
  return new RowError("the value should be number");
}

function accumulate(kind: AccKind, s: AccState, v: Value, valid: boolean): void {
  if (!valid) return;
  if (kind === "count") {
    if (v !== null) s.count++;
    return;
  }
  // sum skips nulls; min, max and avg reject them like any other non-number.
  if (kind === "sum" && v === null) return;
  const x = typeof v === "number" ? v : typeof v === "bigint" ? Number(v) : undefined;
  if (x === undefined) throw notNumber();
  switch (kind) {
    case "sum":
    case "avg":
      s.sum += x;
      break;
    case "min":
      if (s.count === 0 || x < s.best) s.best = x;
      break;
    case "max":
      if (s.count === 0 || x > s.best) s.best = x;
      break;
  }
  s.count++;
}

function result(kind: AccKind, s: AccState): Value {
  switch (kind) {
    case "count":
      return BigInt(s.count);
    case "sum":
      return s.sum;
    case "avg":
      return s.count === 0 ? 0 : s.sum / s.count;
    default:
      return s.count === 0 ? 0 : s.best;
  }
}

function reset(s: AccState): void {
  s.count = 0;
  s.sum = 0;
  s.best = 0;
}

function accDef(kind: AccKind): FuncDef {
  return {
    name: `acc_${kind}`,
    kind: "analytic",
    validate: (args) =>
      args.length !== 1 && args.length !== 3 ? `Expect 1/3 arguments but found ${args.length}.` : undefined,
    analytic: {
      init: () => new AccState(),
      step(args, valid, state) {
        const s = state as AccState;
        if (args.length === 3) {
          const begin = args[1]!;
          const end = args[2]!;
          if (typeof begin !== "boolean") throw new RowError("onBegin should be boolean");
          if (typeof end !== "boolean") throw new RowError("onReset should be boolean");
          if (!s.started) {
            reset(s);
            if (begin) s.started = true;
          }
          if (s.started) accumulate(kind, s, args[0]!, valid);
          // The resetting row's contribution is still returned.
          if (end) s.started = false;
          return result(kind, s);
        }
        accumulate(kind, s, args[0]!, valid);
        return result(kind, s);
      },
    },
  };
}

register(accDef("sum"), accDef("min"), accDef("max"), accDef("avg"), accDef("count"));
