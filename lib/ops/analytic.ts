/**
 * Analytic functions (`<n>_analytic`, sql §14): evaluated once per input row, before WHERE and
 * windows, each call site with its own state per partition; results are cached on the tuple.
 */
import { RowError } from "../errors.ts";
import { Tuple, type EvalCtx } from "../expr/row.ts";
import { fmtV, type Value } from "../value/values.ts";
import { callFailure } from "../functions/invoke.ts";
import type { AnalyticSite } from "../plan/specs.ts";
import { Collection, type Item } from "../core/item.ts";
import { Operator, type OpEnv } from "../core/operator.ts";

export class AnalyticOp extends Operator {
  private readonly sites: AnalyticSite[];
  private readonly slots: number;
  private readonly ctx: EvalCtx = { window: null };
  constructor(name: string, env: OpEnv, sites: AnalyticSite[], slots: number) {
    super(name, env, "");
    this.sites = sites;
    this.slots = slots;
  }

  protected process(item: Item): void {
    if (item instanceof Tuple) {
      this.metrics.messagesProcessed++;
      this.compute(item);
      this.emit(item);
    } else if (item instanceof Collection) {
      for (const r of item.rows) if (r instanceof Tuple) this.compute(r);
      this.metrics.messagesProcessed += item.rows.length;
      this.emit(item);
    }
  }

  /**
   * Per call site, the state of every partition. Analytic states (functions/analytic*.ts) are
   * plain data objects, so they are restored by copying the saved fields into a fresh `init()`.
   */
  override snapshot(): unknown {
    return this.sites.map((s) => [...s.states]);
  }

  override restore(s: unknown): void {
    const saved = s as [string, object][][];
    this.sites.forEach((site, i) => {
      site.states.clear();
      for (const [k, v] of saved[i] ?? []) site.states.set(k, Object.assign(site.def.analytic!.init() as object, v));
    });
  }

  private compute(t: Tuple): void {
    const cache: Value[] = t.cache ?? (t.cache = new Array(this.slots));
    const ctx = this.ctx;
    for (const s of this.sites) {
      let key = "";
      for (const p of s.partition) key += fmtV(p(t, ctx));
      let valid = true;
      if (s.when) {
        try {
          valid = s.when(t, ctx) !== false;
        } catch (e) {
          if (!(e instanceof RowError)) throw e;
        }
      }
      const args = new Array<Value>(s.args.length);
      for (let i = 0; i < args.length; i++) args[i] = s.args[i]!(t, ctx);
      let state = s.states.get(key);
      if (state === undefined) {
        state = s.def.analytic!.init();
        s.states.set(key, state);
      }
      try {
        cache[s.slot] = s.def.analytic!.step(args, valid, state, s.ctx);
      } catch (e) {
        throw callFailure(s.ctx, e);
      }
    }
  }
}
