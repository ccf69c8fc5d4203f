/**
 * The turn budget: how long one piece of a rule's work may hold the event loop before the rest
 * waits for a later turn, with timers, sockets, sources and the other rules served between. Every
 * loop that slices its work asks it: an operator spreading one item's rows (Operator.spreadRows:
 * GROUP BY, WHERE/HAVING over groups, SELECT), the sink backlog and the payloads and templates it
 * builds in slices (sink/backlog.ts, json-slices.ts, delimited-slices.ts, template/exec.ts), the
 * trace store's writer (runtime/trace/sqlite-store.ts), and the values of the rule's inlet drain
 * (runtime/drain.ts).
 *
 * A `Turn` is one turn's deadline. It looks at the clock only when asked (`spent`), or every
 * `every` units (`more`), since performance.now() is not free next to a row's work. An unbounded
 * turn (`WHOLE`: a virtual clock's replay, a traced rule, `complete`, a sink's drain at the end)
 * never ends: the work is handled to the end, and no cap applies.
 *
 * The slicers of one event-loop turn also share one deadline, LOOP_MS after the first of them
 * began (`Turn.inLoop`, `loopDeadline`): at a window's close the projection, the sink's backlog and
 * an inlet drain each had their own 2–4 ms and, landing in the same turn, held the loop for their
 * sum. Now the second and third slicer of a turn find the turn's time spent, do one chunk of their
 * work (each loop does a chunk before it looks at the clock, so every slicer moves on) and yield.
 * The turn ends at the next timers phase: a 0 ms timer armed when the deadline is set (the timers
 * run first in each turn of the loop, after the poll and the immediates of the turn before).
 */

/** Time (ms) an operator may spend on one item, and a sink backlog on one slice, per turn (OpEnv.turnMs). */
export const TURN_MS = 2;
/**
 * Time (ms) one inlet drain may run per turn: a drain taking everything queued ran 15–46 ms once
 * a backlog had built up (W4 at 50k msg/s).
 */
export const DRAIN_MS = 4;
/** Records an inlet moves into the topology per step (the drain looks at the clock after each). */
export const DRAIN_STEP = 256;
/** Cheap units (rows grouped, filtered, projected; array elements encoded) between two looks at the clock. */
export const ROWS_PER_LOOK = 64;
/** Dearer units (sink outputs encoded; a template's range iterations) between two looks at the clock. */
export const OUTPUTS_PER_LOOK = 32;
/** Outputs (or rows of one result sent singly) a sink backlog slice hands on at most. */
export const SLICE_OUTPUTS = 256;
/** Rows of a whole-array payload or of a whole-window template a slice builds at most. */
export const SLICE_ROWS = SLICE_OUTPUTS * 4;

/**
 * Time (ms) all the slicers of one event-loop turn may spend together (`Turn.inLoop`,
 * `loopDeadline`): a drain alone keeps its DRAIN_MS.
 */
export const LOOP_MS = DRAIN_MS;

/** The deadline of the event-loop turn under way (0: no slicer has asked in it). */
let loopUntil = 0;
/** Ends the loop turn at the next timers phase; created at the first ask, re-armed with `refresh`. */
let loopTimer: ReturnType<typeof setTimeout> | undefined;

function endLoopTurn(): void {
  loopUntil = 0;
}

/**
 * The deadline (a performance.now() time) of the event-loop turn under way, shared by every
 * slicer in it: LOOP_MS after the first ask of the turn. `now`: the caller's clock reading.
 */
export function loopDeadline(now: number = performance.now()): number {
  if (loopUntil === 0) {
    loopUntil = now + LOOP_MS;
    if (loopTimer === undefined) {
      loopTimer = setTimeout(endLoopTurn, 0);
      // The turn's end must not keep a finished process alive.
      loopTimer.unref?.();
    } else loopTimer.refresh();
  }
  return loopUntil;
}

export class Turn {
  /** The performance.now() time the turn ends; Infinity: unbounded. */
  readonly until: number;

  /** A turn that ends `ms` from now, or at `until` when given; undefined: an unbounded one (prefer `WHOLE`). */
  constructor(ms?: number, until?: number) {
    this.until = ms === undefined ? Infinity : (until ?? performance.now() + ms);
  }

  /** A slicer's turn: `ms` from now, or sooner when the event-loop turn's shared time runs out (see the header). */
  static inLoop(ms: number): Turn {
    const now = performance.now();
    return new Turn(ms, Math.min(now + ms, loopDeadline(now)));
  }

  /** The work is handled to the end: no deadline, no cap. */
  get unbounded(): boolean {
    return this.until === Infinity;
  }

  /** The deadline has passed (looks at the clock; never in an unbounded turn). */
  spent(): boolean {
    return this.until !== Infinity && performance.now() >= this.until;
  }

  /**
   * For a loop that looks after each unit: whether to go on once `done` units are done — fewer
   * than `cap` and, every `every` units (a power of two), the deadline not passed.
   */
  more(done: number, every: number, cap = Infinity): boolean {
    if (this.until === Infinity) return true;
    if (done >= cap) return false;
    return (done & (every - 1)) !== 0 || performance.now() < this.until;
  }

  /** For a loop that looks after each chunk of units: `done` reached `cap`, or the deadline passed. */
  over(done: number, cap: number): boolean {
    return this.until !== Infinity && (done >= cap || performance.now() >= this.until);
  }
}

/** The unbounded turn: everything is handled now. */
export const WHOLE: Turn = new Turn();
