/**
 * The daemon's rule state machine, the only one (rest-api.md §6.1): eKuiper's state names and
 * last-will messages, actions serialised (an action arriving while another runs waits its turn; a
 * repeated identical action is dropped), which run is current, and the metrics/topology of the
 * last run kept after it stops. Runs come from a RunFactory (the runtime's `Rule.start`, which
 * hands back a stateless run handle); this file decides when to start and stop them.
 */
import type { ByteBudget } from "../core/byte-budget.ts";
import { errorText } from "../errors.ts";
import type { StoredRule } from "../store/stored-rule.ts";
import type { NodeMetrics } from "../core/metrics.ts";
import type { ScanTableContent } from "../ops/join.ts";
import type { RunExit, RunHandle } from "../runtime/rule.ts";
import type { Peek } from "../runtime/peek.ts";
import type { TraceStrategy } from "../runtime/trace/rule-tracer.ts";

export type { RunExit };

export const RuleStateName = {
  stopped: "stopped",
  starting: "starting",
  running: "running",
  stopping: "stopping",
  scheduledStop: "stopped: waiting for next schedule.",
  stoppedByErr: "stopped by error",
} as const;
export type RuleStateName = (typeof RuleStateName)[keyof typeof RuleStateName];

export interface Topo {
  readonly sources: string[];
  readonly edges: Record<string, string[]>;
}

/**
 * A run as the lifecycle holds it: what it uses of a run handle (runtime/rule.ts RunHandle), which
 * a partitioned run (partitioned-run.ts) also is; scan tables and rewinding are optional.
 */
export type HeldRun = Pick<RunHandle, "nodes" | "topo" | "stop"> & Partial<Pick<RunHandle, "scanTables" | "resetState" | "trace" | "peek" | "windowBudget" | "holdForSinks" | "resumeDrains">>;

/** Starts a run of `def`; throws the planning/start error (the rule goes `stopped by error`). */
export type RunFactory = (def: StoredRule, onExit: (exit: RunExit) => void) => Promise<HeldRun> | HeldRun;

type Action = "start" | "stop" | "scheduleStart" | "scheduleStop";

/** A rule is scheduled when it has datetime ranges or both cron and duration (rules-and-sinks.md §7). */
export function isScheduled(def: StoredRule): boolean {
  const o = def.options;
  return o.cronDatetimeRange.length > 0 || (o.cron !== "" && o.duration !== "");
}

export class RuleLifecycle {
  state: RuleStateName = RuleStateName.stopped;
  message = "";
  lastStartTimestamp = 0;
  lastStopTimestamp = 0;
  /** The nodes and topology of the current or last run (kept after it stops). */
  lastNodes: readonly NodeMetrics[] = [];
  /** The topology of the last run that stopped (a running rule's is its run's). */
  private stoppedTopo: Topo | undefined;

  /** The topology of the current run, else of the last one; undefined when the rule never ran. */
  get lastTopo(): Topo | undefined {
    return this.run ? this.run.topo() : this.stoppedTopo;
  }
  /** Tracing is started on the current run (reset by every stop: a new run starts untraced). */
  tracing = false;
  private run: HeldRun | undefined;
  private queue: Promise<void> = Promise.resolve();
  private pending: Action | undefined;
  /** Bumped per run, so a late exit report of an old run is ignored. */
  private generation = 0;
  /** Told of every settled state (running, stopped, stopped by error …) with its message: the daemon logs them. */
  onState: ((id: string, state: RuleStateName, message: string) => void) | undefined;

  constructor(
    public def: StoredRule,
    private readonly factory: RunFactory,
    /** Called when all sources reached EOF (the manager sets `triggered=false`). */
    private readonly onEof: (id: string) => void,
  ) {}

  get id(): string {
    return this.def.id;
  }

  /** The console's data peek on the running run (false when the rule is not running), or its end (undefined). */
  peek(p: Peek | undefined): boolean {
    if (!this.run?.peek) return false;
    this.run.peek(p);
    return true;
  }

  /** `POST /rules/{id}/trace/start|stop` on the running run: `strategy`, or undefined to stop. */
  setTrace(strategy: TraceStrategy | undefined): void {
    this.tracing = strategy !== undefined;
    this.run?.trace?.(strategy);
  }

  /** Live metrics of the current run, else those kept from the last one. */
  nodes(): readonly NodeMetrics[] {
    return this.run ? this.run.nodes() : this.lastNodes;
  }

  /** What the current run's windows hold against the rule's cap; undefined when not running (or a partitioned run). */
  windowBudget(): ByteBudget | undefined {
    return this.run?.windowBudget?.();
  }

  /** The scan tables of the current run (`GET /rules/{id}/scantables`); undefined when none. */
  scanTables(): ScanTableContent[] | undefined {
    return this.run?.scanTables?.();
  }

  /** `PUT /rules/{id}/reset_state` on the current run; false when the runtime cannot rewind. */
  resetState(stream: string, input: unknown): boolean {
    if (!this.run?.resetState) return false;
    this.run.resetState(stream, input);
    return true;
  }

  get running(): boolean {
    return this.state === RuleStateName.running;
  }

  /** Queues `fn`; a repeated identical action already waiting is dropped. */
  private enqueue(action: Action, fn: () => Promise<void>): Promise<void> {
    if (this.pending === action) return this.queue;
    this.pending = action;
    this.queue = this.queue.then(async () => {
      if (this.pending === action) this.pending = undefined;
      const before = this.state;
      const msg = this.message;
      await fn();
      if (this.state !== before || this.message !== msg) this.onState?.(this.id, this.state, this.message);
    });
    return this.queue;
  }

  /**
   * Starts (or restarts) the rule now, re-planning from `def`: the REST start API, create and
   * update. A running run stops first with `stopMessage`.
   */
  startNow(def: StoredRule = this.def, stopMessage = "stopped by update"): Promise<void> {
    return this.enqueue("start", async () => {
      this.def = def;
      if (this.run) await this.doStop(stopMessage, RuleStateName.stopped);
      await this.doStart();
    });
  }

  /** A scheduled rule started outside its schedule: stop any run and wait for the scheduler. */
  waitForSchedule(def: StoredRule = this.def, stopMessage = "stopped by update"): Promise<void> {
    return this.enqueue("start", async () => {
      this.def = def;
      if (this.run) await this.doStop(stopMessage, RuleStateName.scheduledStop);
      this.state = RuleStateName.scheduledStop;
      this.message = "";
    });
  }

  /** The internal start (boot recovery, restart strategy): scheduled rules wait for the scheduler. */
  start(): Promise<void> {
    return this.enqueue("start", async () => {
      if (this.state === RuleStateName.starting || this.state === RuleStateName.running || this.state === RuleStateName.scheduledStop) return;
      if (isScheduled(this.def)) {
        this.state = RuleStateName.scheduledStop;
        return;
      }
      await this.doStart();
    });
  }

  stop(message = "canceled manually"): Promise<void> {
    return this.enqueue("stop", async () => {
      if (this.state === RuleStateName.stopped || this.state === RuleStateName.stoppedByErr) {
        if (this.state === RuleStateName.stopped && !this.run) this.message = message;
        return;
      }
      await this.doStop(message, RuleStateName.stopped);
    });
  }

  scheduleStart(): Promise<void> {
    return this.enqueue("scheduleStart", async () => {
      if (this.state === RuleStateName.stopped || this.state === RuleStateName.stoppedByErr || this.state === RuleStateName.scheduledStop) await this.doStart();
    });
  }

  /** Stops a running rule with `message`, into `target` (waiting state or plain stopped). */
  scheduleStop(message: string, target: RuleStateName = RuleStateName.scheduledStop): Promise<void> {
    return this.enqueue("scheduleStop", async () => {
      if (this.state === RuleStateName.running) await this.doStop(message, target);
      else if (this.state !== RuleStateName.stoppedByErr && target === RuleStateName.scheduledStop) this.state = target;
    });
  }

  /** Waits for every queued action. */
  settled(): Promise<void> {
    return this.queue;
  }

  private async doStart(): Promise<void> {
    this.state = RuleStateName.starting;
    this.message = "";
    const gen = ++this.generation;
    try {
      // Bound, not a closure over this frame: the run holds it as long as it runs.
      const run = await this.factory(this.def, this.exited.bind(this, gen));
      if (gen !== this.generation) {
        await run.stop();
        return;
      }
      this.run = run;
      this.lastStartTimestamp = Date.now();
      this.state = RuleStateName.running;
    } catch (e) {
      this.state = RuleStateName.stoppedByErr;
      this.message = errorText(e);
      this.lastStopTimestamp = Date.now();
    }
  }

  private async doStop(message: string, target: RuleStateName): Promise<void> {
    const run = this.run;
    this.keep(run);
    this.run = undefined;
    this.generation++;
    this.tracing = false;
    if (run) {
      this.state = RuleStateName.stopping;
      try {
        await run.stop();
      } catch {
        // a failing stop still ends the run
      }
      this.lastNodes = run.nodes();
      this.lastStopTimestamp = Date.now();
    }
    this.state = target;
    this.message = message;
  }

  /** What is reported of a run once it is no longer the current one (its nodes are read again once it stopped). */
  private keep(run: HeldRun | undefined): void {
    if (!run) return;
    this.lastNodes = run.nodes();
    this.stoppedTopo = run.topo();
  }

  /** A run ended by itself: EOF → `stopped`/`done`; a runtime error → `stopped by error` with its message. */
  private exited(gen: number, exit: RunExit): void {
    if (gen !== this.generation) return;
    void this.enqueue("stop", async () => {
      if (gen !== this.generation || !this.run) return;
      const run = this.run;
      this.keep(run);
      this.run = undefined;
      this.generation++;
      try {
        await run.stop();
      } catch {
        // already ended
      }
      this.lastNodes = run.nodes();
      this.lastStopTimestamp = Date.now();
      if (exit.kind === "eof") {
        this.state = RuleStateName.stopped;
        this.message = "done";
        this.onEof(this.id);
      } else {
        // eKuiper leaves the message empty here; floe reports what stopped the rule.
        this.state = RuleStateName.stoppedByErr;
        this.message = exit.message;
      }
    });
  }
}
