/**
 * Aggregate functions (functions.md §1, §15). `exec` gets one array per argument holding the
 * group's per-row values (§0.5); the incremental ones also offer an `accumulator` that yields the
 * same result row by row.
 */
import type { Value } from "../value/values.ts";
import { CountColumn, CountFold, NumColumn, NumFold, runFold, type NumOp } from "./agg-fold.ts";
import { arity, NUMBER, register, validateArgs, type FuncDef } from "./registry.ts";
import "./agg-collect.ts";
import "./agg-stats.ts";
import "./agg-inc.ts";

const oneNumber = validateArgs(1, [NUMBER]);

function numAgg(op: NumOp): FuncDef {
  return {
    name: op,
    kind: "aggregate",
    validate: oneNumber,
    policy: "N",
    incremental: true,
    exec: (args) => runFold(new NumFold(op), args[0] as Value[]),
    accumulator: () => new NumFold(op),
    column: () => new NumColumn(op),
  };
}

register(
  {
    name: "count",
    kind: "aggregate",
    validate: arity(1),
    policy: "N",
    incremental: true,
    exec: (args) => {
      const a = args[0] as Value[];
      if (a.length === 0) return null;
      let c = 0;
      for (let i = 0; i < a.length; i++) if (a[i] !== null) c++;
      return BigInt(c);
    },
    accumulator: () => new CountFold(),
    column: () => new CountColumn(),
  },
  numAgg("sum"),
  numAgg("avg"),
  numAgg("max"),
  numAgg("min"),
);
