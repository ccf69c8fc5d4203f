import { describe, expect, test } from "bun:test";
import { Bus } from "../../lib/core/bus.ts";
import { Ring } from "../../lib/core/ring.ts";

describe("ring", () => {
  test("is a bounded FIFO that wraps around", () => {
    const r = new Ring<number>(3);
    expect([r.push(1), r.push(2), r.push(3), r.push(4)]).toEqual([true, true, true, false]);
    expect(r.shift()).toBe(1);
    expect(r.push(4)).toBe(true);
    const out: number[] = [];
    expect(r.takeInto(out, 10)).toBe(3);
    expect(out).toEqual([2, 3, 4]);
    expect(r.length).toBe(0);
  });
});

/** A consumer that takes at most `rate` records per tick, like a rule whose sink is slow. */
function slowConsumer(bus: Bus<number>, capacity: number, rate: number) {
  const got: number[] = [];
  const sub = bus.subscribe(capacity, "block", () => {});
  const tick = () => {
    sub.take(got, rate);
  };
  return { sub, got, tick };
}

describe("bus", () => {
  test("a refused publisher resumes once the last subscriber short of room took, or left", () => {
    const bus = new Bus<number>();
    const subs = [bus.subscribe(2, "block", () => {}), bus.subscribe(2, "block", () => {}), bus.subscribe(3, "block", () => {}), bus.subscribe(1, "drop-oldest", () => {})];
    expect(bus.publish([1, 2])).toBe(true);
    // The third has room for one more, the first two for none.
    expect(bus.publish([3])).toBe(false);
    let resumed = 0;
    bus.onDrain(() => resumed++);
    const out: number[] = [];
    subs[0]!.take(out, 1);
    subs[3]!.take(out, 1);
    expect(resumed).toBe(0);
    // A take by a subscriber that had room changes nothing; the second's last room does.
    subs[2]!.take(out, 1);
    expect(resumed).toBe(0);
    subs[1]!.take(out, 1);
    expect(resumed).toBe(1);
    // Refused again for a batch of two: the first and second lack room; the second leaves, the first takes.
    expect(bus.publish([4, 5])).toBe(false);
    bus.onDrain(() => resumed++);
    subs[1]!.close();
    expect(resumed).toBe(1);
    subs[0]!.take(out, 1);
    expect(resumed).toBe(2);
    expect(bus.publish([4, 5])).toBe(true);
  });

  test("a batch is admitted to every subscriber or to none", () => {
    const bus = new Bus<number>();
    const a = bus.subscribe(4, "block", () => {});
    const b = bus.subscribe(2, "block", () => {});
    expect(bus.maxBatch).toBe(2);
    expect(bus.publish([1, 2])).toBe(true);
    expect(bus.publish([3])).toBe(false);
    expect(a.length).toBe(2);
    expect(b.length).toBe(2);
    const out: number[] = [];
    b.take(out, 1);
    expect(bus.publish([3])).toBe(true);
    expect(a.queue.toArray()).toEqual([1, 2, 3]);
    expect(b.queue.toArray()).toEqual([2, 3]);
  });

  test("a slow consumer pushes back: the publisher pauses, nothing is lost, memory stays bounded", () => {
    const bus = new Bus<number>();
    const c = slowConsumer(bus, 8, 3);
    let next = 0;
    let paused = 0;
    let maxQueued = 0;
    let waiting = false;
    const produce = () => {
      while (next < 100 && !waiting) {
        const batch = [next, next + 1, next + 2, next + 3].filter((x) => x < 100);
        if (!bus.publish(batch)) {
          paused++;
          waiting = true;
          bus.onDrain(() => {
            waiting = false;
          });
          return;
        }
        next += batch.length;
        maxQueued = Math.max(maxQueued, c.sub.length);
      }
    };
    for (let i = 0; i < 200 && c.got.length < 100; i++) {
      produce();
      c.tick();
    }
    expect(c.got).toEqual([...Array(100).keys()]);
    expect(paused).toBeGreaterThan(0);
    expect(maxQueued).toBeLessThanOrEqual(8);
    expect(bus.refusals).toBe(paused);
  });

  test("onDrain fires once the refused batch fits", () => {
    const bus = new Bus<number>();
    const s = bus.subscribe(4, "block", () => {});
    bus.publish([1, 2, 3]);
    let fired = 0;
    expect(bus.publish([4, 5])).toBe(false);
    bus.onDrain(() => fired++);
    expect(fired).toBe(0);
    s.take([], 1);
    expect(fired).toBe(1);
    s.take([], 2);
    expect(fired).toBe(1);
  });

  test("drop-oldest evicts and counts every dropped record", () => {
    const bus = new Bus<number>();
    const drops: number[] = [];
    const s = bus.subscribe(4, "drop-oldest", () => {});
    s.onDrop = (n) => drops.push(n);
    expect(bus.publish([1, 2, 3])).toBe(true);
    expect(bus.publish([4, 5, 6])).toBe(true);
    expect(s.queue.toArray()).toEqual([3, 4, 5, 6]);
    expect(bus.publish([7, 8, 9, 10, 11, 12])).toBe(true);
    expect(s.queue.toArray()).toEqual([9, 10, 11, 12]);
    expect(s.dropped).toBe(8);
    expect(drops).toEqual([2, 6]);
  });

  test("a drop-oldest subscriber never holds back a blocking one, and vice versa", () => {
    const bus = new Bus<number>();
    const block = bus.subscribe(2, "block", () => {});
    const drop = bus.subscribe(1, "drop-oldest", () => {});
    expect(bus.publish([1, 2])).toBe(true);
    expect(drop.queue.toArray()).toEqual([2]);
    expect(bus.publish([3])).toBe(false);
    expect(drop.dropped).toBe(1);
    block.take([], 2);
    expect(bus.publish([3])).toBe(true);
  });

  test("subscribers are woken after a commit, and a publisher with no subscriber is not blocked", () => {
    const bus = new Bus<number>();
    expect(bus.publish([1, 2, 3])).toBe(true);
    let woken = 0;
    bus.subscribe(4, "block", () => woken++);
    bus.publish([1]);
    expect(woken).toBe(1);
  });
});
