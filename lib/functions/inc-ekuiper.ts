/**
 * The accumulators of eKuiper's opt-in `inc_agg_window` (windows §9, functions §1.3): its planner
 * rewrites each aggregate into an `inc_*` scalar with policy N — a null argument is skipped — and
 * sum/avg run in float. floe reproduces those results on its own incremental evaluator.
 */
import { RowError } from "../errors.ts";
import { isObj, toFloatAll, type Value } from "../value/values.ts";
import { MergeFold } from "./agg-collect.ts";
import { NumFold } from "./agg-fold.ts";
import type { Accumulator } from "./registry.ts";

/** Shared behaviour: nulls skipped, the first failure remembered and thrown by `value()`. */
abstract class IncAccumulator implements Accumulator {
  protected seen = 0;
  private err: RowError | null = null;
  add(args: Value[]): void {
    if (this.err !== null) return;
    for (let i = 0; i < args.length; i++) if (args[i] === null) return;
    try {
      this.step(args);
      this.seen++;
    } catch (e) {
      if (!(e instanceof RowError)) throw e;
      this.err = e;
    }
  }
  value(): Value {
    if (this.err !== null) throw this.err;
    return this.seen === 0 ? null : this.result();
  }
  protected abstract step(args: Value[]): void;
  protected abstract result(): Value;
  snapshot(): unknown {
    return [this.seen, this.err?.message ?? null, this.body()];
  }
  restore(s: unknown): void {
    const [seen, err, body] = s as [number, string | null, unknown];
    this.seen = seen;
    this.err = err === null ? null : new RowError(err);
    this.load(body);
  }
  reset(): void {
    this.seen = 0;
    this.err = null;
    this.clear();
  }
  /** The subclass's own running state, its inverse, and its start. */
  protected body(): unknown {
    return null;
  }
  protected load(_b: unknown): void {}
  protected clear(): void {}
}

/** `inc_count`: non-null values. */
class IncCount extends IncAccumulator {
  protected step(): void {}
  protected result(): Value {
    return BigInt(this.seen);
  }
}

/** `inc_sum` / `inc_avg`: float running sum of `toFloatAll` values. */
class IncFloat extends IncAccumulator {
  private sum = 0;
  constructor(private readonly avg: boolean) {
    super();
  }
  protected step(args: Value[]): void {
    this.sum += toFloatAll(args[0]!);
  }
  protected result(): Value {
    return this.avg ? this.sum / this.seen : this.sum;
  }
  protected override body(): unknown {
    return this.sum;
  }
  protected override load(b: unknown): void {
    this.sum = b as number;
  }
  protected override clear(): void {
    this.sum = 0;
  }
}

/** `inc_collect`: the non-null values. */
class IncCollect extends IncAccumulator {
  private items: Value[] = [];
  protected step(args: Value[]): void {
    this.items.push(args[0]!);
  }
  protected result(): Value {
    return this.items.slice();
  }
  protected override body(): unknown {
    return this.items;
  }
  protected override load(b: unknown): void {
    for (const v of b as Value[]) this.items.push(v);
  }
  protected override clear(): void {
    this.items = [];
  }
}

/** `inc_merge_agg`: objects merged in order; anything else is an error. */
class IncMerge extends IncAccumulator {
  private fold = new MergeFold();
  protected step(args: Value[]): void {
    const v = args[0]!;
    if (!isObj(v)) throw new RowError("argument is not a map[string]interface{}");
    this.fold.push(v);
  }
  protected result(): Value {
    return this.fold.value();
  }
  protected override body(): unknown {
    return this.fold.snapshot();
  }
  protected override load(b: unknown): void {
    this.fold.restore(b);
  }
  protected override clear(): void {
    this.fold = new MergeFold();
  }
}

/** `inc_last_value`: the last non-null value (a null never reaches the body). */
class IncLast extends IncAccumulator {
  private last: Value = null;
  protected step(args: Value[]): void {
    if (typeof args[1] !== "boolean") throw new RowError("second argument is not a bool");
    this.last = args[0]!;
  }
  protected result(): Value {
    return this.last;
  }
  protected override body(): unknown {
    return this.last;
  }
  protected override load(b: unknown): void {
    this.last = b as Value;
  }
  protected override clear(): void {
    this.last = null;
  }
}

/** The accumulator factory eKuiper's rewrite gives aggregate `name`. */
export function ekuiperAccumulator(name: string): () => Accumulator {
  switch (name) {
    case "count":
      return () => new IncCount();
    case "sum":
      return () => new IncFloat(false);
    case "avg":
      return () => new IncFloat(true);
    case "max":
    case "min":
      return () => new NumFold(name);
    case "collect":
      return () => new IncCollect();
    case "merge_agg":
      return () => new IncMerge();
    case "last_value":
      return () => new IncLast();
  }
  throw new Error(`aggregate ${name} has no inc_ rewrite`);
}
