/** Common shape of the window operators (`<n>_window`): a clock, emission of collections. */
import type { Tuple, WindowRange } from "../expr/row.ts";
import type { Zone } from "../expr/time.ts";
import { Collection, type Item } from "../runtime/item.ts";
import { Operator, type OpEnv } from "../runtime/operator.ts";
import type { Clock } from "./clock.ts";

export interface WindowEnv extends OpEnv {
  readonly clock: Clock;
  readonly zone: Zone;
}

export abstract class WindowOp extends Operator {
  protected readonly clock: Clock;
  protected readonly zone: Zone;
  constructor(name: string, env: WindowEnv) {
    super(name, env, "");
    this.clock = env.clock;
    this.zone = env.zone;
  }

  protected process(item: Item): void {
    if ((item as Tuple).data === undefined) return;
    this.metrics.messagesProcessed++;
    this.onRow(item as Tuple);
  }

  protected abstract onRow(t: Tuple): void;

  protected emitWindow(rows: Tuple[], range: WindowRange): void {
    this.emit(new Collection(rows, range));
  }

  /**
   * The time by which every row held now would have been emitted (for `--on-eof flush`), or
   * undefined when nothing is pending on the clock.
   */
  abstract flushTime(): number | undefined;
}
