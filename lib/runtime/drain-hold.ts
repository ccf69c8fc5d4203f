/**
 * Why an execution's drains take nothing now (DrainHost.holdDrains): its sources are attaching
 * (Execution.start), a stop holds the input for its sinks (Execution.holdForSinks), a checkpoint
 * waits for an operator to end a spread (runtime/checkpoint.ts). A drain woken meanwhile is
 * deferred (Drain.deferred) and woken once no reason is left.
 */
import type { Drain } from "./drain.ts";

export type HoldReason = "attach" | "sinks" | "checkpoint";

export class DrainHold {
  private readonly reasons = new Set<HoldReason>();

  constructor(private readonly drains: readonly Drain[]) {}

  get held(): boolean {
    return this.reasons.size > 0;
  }

  has(reason: HoldReason): boolean {
    return this.reasons.has(reason);
  }

  hold(reason: HoldReason): void {
    this.reasons.add(reason);
  }

  /** `reason` ended: once none is left, the drains woken meanwhile run. */
  release(reason: HoldReason): void {
    if (!this.reasons.delete(reason) || this.reasons.size > 0) return;
    for (const d of this.drains) {
      if (!d.deferred) continue;
      d.deferred = false;
      d.wake();
    }
  }
}
