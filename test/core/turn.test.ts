import { expect, test } from "bun:test";
import { Collection, type Item } from "../../lib/core/item.ts";
import { Operator } from "../../lib/core/operator.ts";
import { LOOP_MS, loopDeadline, ROWS_PER_LOOK, Turn, TURN_MS, WHOLE } from "../../lib/core/turn.ts";
import { Tuple } from "../../lib/expr/row.ts";

test("an unbounded turn never ends and ignores caps", () => {
  expect(WHOLE.unbounded).toBe(true);
  expect(WHOLE.spent()).toBe(false);
  expect(WHOLE.more(64, 64, 1)).toBe(true);
  expect(WHOLE.over(1_000_000, 1)).toBe(false);
  expect(new Turn(undefined).unbounded).toBe(true);
});

test("a turn whose time is up ends at the next look at the clock, not between looks", () => {
  const t = new Turn(-1); // its deadline already passed
  expect(t.unbounded).toBe(false);
  expect(t.spent()).toBe(true);
  expect(t.more(1, 32)).toBe(true); // not a multiple of 32: no look
  expect(t.more(31, 32)).toBe(true);
  expect(t.more(32, 32)).toBe(false);
  expect(t.more(64, 64)).toBe(false);
  expect(t.over(1, 100)).toBe(true);
});

test("a turn with time left ends at its cap of units", () => {
  const t = new Turn(3_600_000);
  expect(t.spent()).toBe(false);
  expect(t.more(32, 32)).toBe(true);
  expect(t.more(255, 32, 256)).toBe(true);
  expect(t.more(256, 32, 256)).toBe(false);
  expect(t.over(1023, 1024)).toBe(false);
  expect(t.over(1024, 1024)).toBe(true);
});

test("the clock is looked at only every `every` units", () => {
  const real = performance.now;
  let looks = 0;
  performance.now = () => {
    looks++;
    return real.call(performance);
  };
  try {
    const t = new Turn(3_600_000);
    looks = 0;
    for (let done = 1; done <= 640; done++) t.more(done, 64);
    expect(looks).toBe(10);
    looks = 0;
    for (let done = 1; done <= 640; done++) WHOLE.more(done, 64);
    expect(looks).toBe(0);
  } finally {
    performance.now = real;
  }
});

/** Spins for `ms`: a unit of work with a known cost. */
function work(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until);
}

/** Resolves in a later event-loop turn, once the turn under way has ended (its 0 ms timer ran). */
const nextLoopTurn = () => Bun.sleep(3);

test("the slicers of one event-loop turn share its deadline: the third finds it spent and does one chunk", async () => {
  await nextLoopTurn();
  const t0 = performance.now();
  const chunks: number[] = [];
  const turns: Turn[] = [];
  // Three slicers in one turn, each allowed TURN_MS alone, each doing 0.05 ms chunks as the real loops do.
  for (let s = 0; s < 3; s++) {
    const turn = Turn.inLoop(TURN_MS);
    turns.push(turn);
    let n = 0;
    do {
      work(0.05);
      n++;
    } while (!turn.spent());
    chunks.push(n);
  }
  const elapsed = performance.now() - t0;
  // The first had its own TURN_MS, the second what was left of the turn's LOOP_MS, the third nothing
  // (a machine that takes the CPU away may end the first two sooner, never the third later).
  expect(chunks[0]).toBeGreaterThanOrEqual(1);
  expect(chunks[1]).toBeGreaterThanOrEqual(1);
  expect(chunks[2]).toBe(1);
  // One deadline for the turn, LOOP_MS after the first slicer began: the later ones end there too.
  const first = turns[0]!.until - TURN_MS;
  expect(loopDeadline()).toBeCloseTo(first + LOOP_MS, 2);
  expect(turns[1]!.until).toBe(loopDeadline());
  expect(turns[2]!.until).toBe(loopDeadline());
  // Together: the turn's time and one chunk more, not three slicers' TURN_MS.
  expect(elapsed).toBeGreaterThanOrEqual(LOOP_MS);
  const ended = loopDeadline();
  await nextLoopTurn();
  // A later turn has the whole budget again: a deadline of its own, from its first slicer.
  const t = Turn.inLoop(TURN_MS);
  expect(t.until).toBeGreaterThan(ended);
  expect(loopDeadline() - t.until).toBeCloseTo(LOOP_MS - TURN_MS, 2);
});

test("operators spreading rows in one event-loop turn stop at its shared deadline", async () => {
  const done = [0, 0, 0];
  const finished = [false, false, false];
  const ops = done.map((_, k) => {
    const op = new (class extends Operator {
      constructor() {
        super(`${k}_project`, { now: () => 0, sendError: false, turnMs: TURN_MS }, "");
      }
      protected process(item: Item): void {
        const c = item as Collection;
        this.spreadRows(c.ownership, c.rows.length, () => {
          work(0.02);
          done[k]!++;
        }, () => (finished[k] = true));
      }
    })();
    return op;
  });
  await nextLoopTurn();
  const items = ops.map(() => new Collection(Array.from({ length: 1000 }, (_, i) => new Tuple({ i }, null, i, "s")), null));
  for (let k = 0; k < ops.length; k++) ops[k]!.push(items[k]!);
  // In this turn: the first two shared LOOP_MS (a look's worth of rows at least each: a machine
  // that takes the CPU away may end the turn sooner), the third handled one look's worth and yielded.
  expect(done[0]).toBeGreaterThanOrEqual(ROWS_PER_LOOK);
  expect(done[1]).toBeGreaterThanOrEqual(ROWS_PER_LOOK);
  expect(done[2]).toBe(ROWS_PER_LOOK);
  expect(finished).toEqual([false, false, false]);
  // Each goes on in later turns to the end.
  for (let i = 0; i < 2000 && !finished.every((f) => f); i++) await new Promise<void>((r) => setImmediate(r));
  expect(done).toEqual([1000, 1000, 1000]);
});
