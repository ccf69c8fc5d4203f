/**
 * What a run's operators read of it (OpEnv, WindowEnv): one object per run whose `now` and
 * `onRowError` are methods asking the run, not closures over it — an idle rule's memory is
 * mostly such small parts, thousands of rules on one stream.
 */
import type { ByteBudget } from "../core/byte-budget.ts";
import { TURN_MS } from "../core/turn.ts";
import type { Clock } from "../ops/window/clock.ts";
import type { Zone } from "../value/time.ts";
import type { RuleEnv } from "./topology.ts";

/** The run as its operators' environment sees it. */
export interface RunClock {
  /** The time of the batch being drained, else the clock's. */
  now(): number;
  /** A record failed (counted on its node): told to the run's error report, if it has one. */
  rowError(message: string): void;
}

export class RunEnv implements RuleEnv {
  /** A wall-clock run shares the event loop: one item's work is spread across turns (core/turn.ts). */
  readonly turnMs = TURN_MS;

  constructor(
    private readonly run: RunClock,
    readonly sendError: boolean,
    readonly clock: Clock,
    readonly zone: Zone,
    readonly windowBudget: ByteBudget,
    readonly closeMarks: boolean | undefined,
  ) {}

  now(): number {
    return this.run.now();
  }

  onRowError(message: string): void {
    this.run.rowError(message);
  }
}
