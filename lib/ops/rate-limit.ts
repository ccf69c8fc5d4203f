/**
 * `<i>_ratelimit` (rules-and-sinks.md §8.1): a push source's `interval` keeps only the latest
 * record and lets it through once per interval, on the rule's clock from the rule's start; an
 * interval with no new record lets nothing through. The first of the source's helpers.
 */
import { Tuple } from "../expr/row.ts";
import type { Item } from "../core/item.ts";
import { Operator } from "../core/operator.ts";
import type { Timer } from "./window/clock.ts";
import type { WindowEnv } from "./window/window-op.ts";

export class RateLimitOp extends Operator {
  private latest: Tuple | null = null;
  private timer: Timer;
  private readonly tick = (): void => {
    const clock = (this.env as WindowEnv).clock;
    this.timer = clock.schedule(clock.now() + this.interval, this.tick);
    const t = this.latest;
    if (t === null) return;
    this.latest = null;
    this.emit(t);
  };

  constructor(
    name: string,
    env: WindowEnv,
    private readonly interval: number,
  ) {
    super(name, env, "");
    this.timer = env.clock.schedule(env.clock.now() + interval, this.tick);
  }

  protected process(item: Item): void {
    if (!(item instanceof Tuple)) return;
    this.metrics.messagesProcessed++;
    this.latest = item;
  }

  override close(): void {
    this.timer.cancel();
  }
}
