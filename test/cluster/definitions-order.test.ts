/**
 * Definition sync against a scripted bucket: the test decides when each put lands in the bucket,
 * when (and whether) the server answers it, and how far each member's watch has got. Like the
 * real bucket, a put is a compare-and-set on the key's last revision (refused when another write
 * got in first: the member reads the revision again and sends a new put), and a watch never
 * delivers a revision that the bucket no longer keeps (more than `HISTORY` later writes of the
 * key before the watch got to it), own echoes included. Whatever the interleaving, every member
 * must end holding the value of the key's last revision.
 */
import { afterEach, expect, test } from "bun:test";
import { DefinitionSync, EntrySigner, groupSecret, RefusalLog, type DefinitionChange, type ReplicatedStore } from "../../lib/cluster/index.ts";
import { GROUP_AUTH } from "../helpers/nats.ts";
import type { KV } from "../../lib/cluster/nats.ts";
import { Kv } from "../../lib/store/kv.ts";
import { prng } from "../helpers/prng.ts";

/** Revisions the scripted bucket keeps per key, as the real definitions bucket does. */
const HISTORY = 5;

interface Stored {
  readonly key: string;
  readonly value: Uint8Array;
  readonly revision: number;
}

/** One put as the test drives it: lands (gets a revision), then is answered or fails. */
interface Put {
  readonly key: string;
  readonly value: Uint8Array;
  /** The revision the compare-and-set expects the key to be at (0: absent). */
  readonly previousSeq: number | undefined;
  revision?: number;
  answered: boolean;
  resolve(rev: number): void;
  reject(e: Error): void;
}

class Bucket {
  readonly log: Stored[] = [];
  readonly latest = new Map<string, Stored>();

  store(key: string, value: Uint8Array): number {
    const s = { key, value, revision: this.log.length + 1 };
    this.log.push(s);
    this.latest.set(key, s);
    return s.revision;
  }

  /** Whether the bucket still keeps `s` (one of the key's last `HISTORY` revisions). */
  keeps(s: Stored): boolean {
    let later = 0;
    for (let i = s.revision; i < this.log.length; i++) if (this.log[i]!.key === s.key) later++;
    return later < HISTORY;
  }

  get lastRev(): number {
    return this.log.length;
  }
}

/** One member's view of the bucket: its puts wait for the test, its watch delivers on request. */
class ScriptedKv {
  /** Sent, not landed yet (they land in send order, as over one connection). */
  readonly queued: Put[] = [];
  /** Landed, not answered yet. */
  readonly landed: Put[] = [];
  private cursor = 0;
  private push: ((s: Stored) => void) | undefined;

  constructor(private readonly bucket: Bucket) {}

  put(key: string, data: string, opts: { previousSeq?: number } = {}): Promise<number> {
    return new Promise<number>((resolve, reject) => {
      this.queued.push({ key, value: new TextEncoder().encode(data), previousSeq: opts.previousSeq, answered: false, resolve, reject });
    });
  }

  /** The oldest queued put reaches the bucket (not answered yet); one whose compare-and-set fails is refused at once. */
  land(): Put {
    const p = this.queued.shift()!;
    if (p.previousSeq !== undefined && (this.bucket.latest.get(p.key)?.revision ?? 0) !== p.previousSeq) {
      p.reject(Object.assign(new Error("wrong last sequence"), { code: 10071 }));
      return p;
    }
    p.revision = this.bucket.store(p.key, p.value);
    this.landed.push(p);
    return p;
  }

  answer(p: Put): void {
    const i = this.landed.indexOf(p);
    if (i < 0) return;
    this.landed.splice(i, 1);
    p.resolve(p.revision!);
  }

  /** The put reached the bucket but the client gave up waiting (a timeout). */
  timeOut(p: Put): void {
    const i = this.landed.indexOf(p);
    if (i < 0) return;
    this.landed.splice(i, 1);
    p.reject(new Error("TIMEOUT"));
  }

  /** The oldest queued put never reaches the bucket. */
  lose(): void {
    this.queued.shift()!.reject(new Error("disconnected"));
  }

  /** The watch catches up to `upTo`, skipping revisions overwritten meanwhile. */
  deliver(upTo = this.bucket.lastRev): void {
    for (; this.cursor < upTo; this.cursor++) {
      const s = this.bucket.log[this.cursor]!;
      if (this.bucket.keeps(s)) this.push!(s);
    }
  }

  // The slice of the KV API DefinitionSync uses.
  async status() {
    return { bucket: "floe_scripted", history: HISTORY, streamInfo: { state: { last_seq: this.bucket.lastRev } } };
  }
  async history() {
    return (async function* () {})();
  }
  async get(key: string) {
    const s = this.bucket.latest.get(key);
    return s ? { key, value: s.value, revision: s.revision, operation: "PUT" } : null;
  }
  async create(key: string, data: string) {
    if (this.bucket.latest.has(key)) throw new Error("wrong last sequence");
    return this.bucket.store(key, new TextEncoder().encode(data));
  }
  async watch(opts: { resumeFromRevision: number }) {
    this.cursor = opts.resumeFromRevision - 1;
    const queue: Stored[] = [];
    let wake: (() => void) | undefined;
    let stopped = false;
    this.push = (s) => {
      queue.push(s);
      wake?.();
    };
    return {
      stop: () => {
        stopped = true;
        wake?.();
      },
      async *[Symbol.asyncIterator]() {
        while (!stopped) {
          const s = queue.shift();
          if (s) yield { key: s.key, revision: s.revision, value: s.value, operation: "PUT" };
          else await new Promise<void>((r) => (wake = r));
        }
      },
    };
  }
}

interface Member {
  sync: DefinitionSync;
  kv: ScriptedKv;
  store: ReplicatedStore;
  local: Kv;
  applied: DefinitionChange[];
}

const syncs: DefinitionSync[] = [];
afterEach(() => {
  for (const s of syncs.splice(0)) s.stop();
});

async function member(bucket: Bucket, instance: string, log: (line: string) => void = () => {}): Promise<Member> {
  const kv = new ScriptedKv(bucket);
  const sync = new DefinitionSync(kv as unknown as KV, instance, new EntrySigner(groupSecret(GROUP_AUTH)), new RefusalLog(log), log);
  syncs.push(sync);
  // The local copy in memory: the sync is under test, not sqlite (a file per member made the 300 seeds take ~20 s).
  const local = new Kv(":memory:");
  const store = await sync.open(local);
  const m: Member = { sync, kv, store, local, applied: [] };
  sync.attach((c) => {
    if (store.get(c.ns, c.key) === c.value) return;
    m.applied.push(c);
    store.quietly(() => (c.value === undefined ? store.delete(c.ns, c.key) : store.set(c.ns, c.key, c.value)));
  });
  return m;
}

/** Lets the watch loops, put callbacks and apply chains run. */
async function tick(): Promise<void> {
  for (let i = 0; i < 3; i++) await new Promise<void>((r) => setImmediate(r));
}

/** What the key's last revision holds. */
function last(bucket: Bucket): string | null {
  const s = bucket.latest.get("d.rule.cg")!;
  return (JSON.parse(new TextDecoder().decode(s.value)) as { v: string | null }).v;
}

function held(m: Member): string | undefined {
  return m.local.get("rule", "r");
}

/** Lands and answers every put of `m`, the new puts it sends after a refused compare-and-set included. */
async function settle(m: Member): Promise<void> {
  do {
    while (m.kv.queued.length > 0) m.kv.land();
    while (m.kv.landed.length > 0) m.kv.answer(m.kv.landed[0]!);
    await tick();
  } while (m.kv.queued.length > 0);
}

test("a write refused by the compare-and-set is written again after the foreign revision, and wins everywhere", async () => {
  const bucket = new Bucket();
  const a = await member(bucket, "a");
  const b = await member(bucket, "b");
  b.store.set("rule", "r", "b1");
  a.store.set("rule", "r", "a1");
  const pb = b.kv.land();
  // a's put expected no revision of the key: refused; a reads the key's revision and sends a1 again.
  a.kv.land();
  await tick();
  const pa = a.kv.land();
  // b's watch gets there before b's put is answered.
  b.kv.deliver();
  a.kv.deliver();
  await tick();
  expect(held(b)).toBe("b1");
  a.kv.answer(pa);
  b.kv.answer(pb);
  await tick();
  expect(last(bucket)).toBe("a1");
  expect([held(a), held(b)]).toEqual(["a1", "a1"]);
  expect(a.applied).toEqual([]);
});

test("the same, with the own puts answered before the watch delivers the foreign revision", async () => {
  const bucket = new Bucket();
  const a = await member(bucket, "a");
  const b = await member(bucket, "b");
  b.store.set("rule", "r", "b1");
  b.kv.answer(b.kv.land());
  a.store.set("rule", "r", "a1");
  await settle(a);
  b.kv.deliver();
  a.kv.deliver();
  await tick();
  expect([held(a), held(b)]).toEqual(["a1", "a1"]);
});

test("a foreign revision that precedes an own write in flight is held back and never applied", async () => {
  const bucket = new Bucket();
  const a = await member(bucket, "a");
  const b = await member(bucket, "b");
  b.store.set("rule", "r", "b1");
  a.store.set("rule", "r", "a1");
  const pa = a.kv.land();
  b.kv.deliver();
  await tick();
  // b's put is refused (a1 got in first); b writes b1 again after it.
  await settle(b);
  a.kv.answer(pa);
  b.kv.deliver();
  a.kv.deliver();
  await tick();
  expect(last(bucket)).toBe("b1");
  expect([held(a), held(b)]).toEqual(["b1", "b1"]);
  // No flapping: b never took a's older value.
  expect(b.applied).toEqual([]);
});

test("a put that timed out but landed, overwritten by a foreign write: the re-sent write wins everywhere", async () => {
  const bucket = new Bucket();
  const a = await member(bucket, "a");
  const b = await member(bucket, "b");
  b.store.set("rule", "r", "b1");
  b.kv.timeOut(b.kv.land());
  a.store.set("rule", "r", "a1");
  await settle(a);
  b.kv.deliver();
  a.kv.deliver();
  await tick();
  expect(b.sync.unsentCount).toBe(1);
  // b re-sends what it holds; that lands last.
  b.sync["resend"]();
  await settle(b);
  a.kv.deliver();
  b.kv.deliver();
  await tick();
  expect(last(bucket)).toBe("b1");
  expect([held(a), held(b)]).toEqual(["b1", "b1"]);
  expect(b.sync.unsentCount).toBe(0);
});

test("a put that timed out after landing later than the foreign write", async () => {
  const bucket = new Bucket();
  const a = await member(bucket, "a");
  const b = await member(bucket, "b");
  a.store.set("rule", "r", "a1");
  b.store.set("rule", "r", "b1");
  a.kv.answer(a.kv.land());
  b.kv.land();
  await tick();
  // The put b sends again after the refused compare-and-set lands after a1, and times out.
  const pb = b.kv.land();
  b.kv.deliver(1);
  await tick();
  b.kv.timeOut(pb);
  b.kv.deliver();
  a.kv.deliver();
  await tick();
  expect([held(a), held(b)]).toEqual(["b1", "b1"]);
  b.sync["resend"]();
  await settle(b);
  a.kv.deliver();
  b.kv.deliver();
  await tick();
  expect([held(a), held(b)]).toEqual(["b1", "b1"]);
  expect(b.applied).toEqual([]);
});

test("a revision received before an own write but applied after it does not overwrite it", async () => {
  const bucket = new Bucket();
  const a = await member(bucket, "a");
  const b = await member(bucket, "b");
  a.store.set("rule", "r", "a1");
  a.kv.answer(a.kv.land());
  // b receives a1, and writes before the apply chain gets to it.
  b.kv.deliver();
  b.store.set("rule", "r", "b1");
  await tick();
  expect(held(b)).toBe("b1");
  await settle(b);
  a.kv.deliver();
  b.kv.deliver();
  await tick();
  expect([held(a), held(b)]).toEqual(["b1", "b1"]);
});

test("a watch that falls more than the bucket's history behind skips a revision, refuses the one after the gap, and converges", async () => {
  const bucket = new Bucket();
  const lines: string[] = [];
  const a = await member(bucket, "a");
  const b = await member(bucket, "b", (l) => lines.push(l));
  // Revision 1 is the seeding mark; a1 … a8 are revisions 2 … 9, and the bucket keeps a4 (revision 5, replacing 4) … a8.
  for (let i = 1; i <= HISTORY + 3; i++) {
    a.store.set("rule", "r", `a${i}`);
    await settle(a);
  }
  b.kv.deliver();
  await tick();
  await b.sync.settled();
  expect(held(b)).toBe(`a${HISTORY + 3}`);
  expect(b.applied.map((c) => c.value)).toEqual(Array.from({ length: HISTORY - 1 }, (_, i) => `a${i + 5}`));
  expect(lines).toEqual(["cluster: refused the group entry d.rule.cg: it replaces revision 4, but the key's previous revision is 0: a replayed or rolled-back entry"]);
});

test("a write that loses every compare-and-set of a bounded number gives up, says so, and is re-sent later", async () => {
  const bucket = new Bucket();
  const lines: string[] = [];
  const a = await member(bucket, "a", (l) => lines.push(l));
  a.store.set("rule", "r", "a1");
  for (let i = 0; i < 5; i++) {
    // Another write gets in first each time.
    bucket.store("d.rule.cg", new TextEncoder().encode("{}"));
    a.kv.land();
    await tick();
  }
  expect(a.kv.queued).toEqual([]);
  expect(a.sync.unsentCount).toBe(1);
  expect(lines).toContain("cluster: cannot publish rule r to the group (retrying): the key changed in the bucket under each of 5 compare-and-set writes");
  // Re-sent once the key is quiet: it lands after the newest revision.
  a.sync["resend"]();
  await settle(a);
  expect(last(bucket)).toBe("a1");
});

test("every interleaving of concurrent writes, landings, answers, timeouts and late watches converges on the last revision", async () => {
  for (let seed = 1; seed <= 300; seed++) {
    const rnd = prng(seed);
    const pick = <T>(xs: T[]): T => xs[Math.floor(rnd() * xs.length)]!;
    const bucket = new Bucket();
    const ms = [await member(bucket, "a"), await member(bucket, "b")];
    const written = [0, 0];
    for (let step = 0; step < 60; step++) {
      const i = Math.floor(rnd() * 2);
      const m = ms[i]!;
      const r = rnd();
      if (r < 0.3 && written[i]! < 8) m.store.set("rule", "r", `${"ab"[i]}${++written[i]!}`);
      else if (r < 0.5 && m.kv.queued.length > 0) m.kv.land();
      else if (r < 0.52 && m.kv.queued.length > 0) m.kv.lose();
      else if (r < 0.7 && m.kv.landed.length > 0) m.kv.answer(pick(m.kv.landed));
      else if (r < 0.75 && m.kv.landed.length > 0) m.kv.timeOut(pick(m.kv.landed));
      else if (r < 0.8) m.sync["resend"]();
      else m.kv.deliver(Math.floor(rnd() * (bucket.lastRev + 1)));
      if (rnd() < 0.3) await tick();
    }
    // Then the network behaves: everything lands and is answered, unsent writes are re-sent, watches catch up.
    for (let round = 0; round < 20; round++) {
      for (const m of ms) {
        while (m.kv.queued.length > 0) m.kv.land();
        while (m.kv.landed.length > 0) m.kv.answer(m.kv.landed[0]!);
      }
      await tick();
      for (const m of ms) if (m.sync.unsentCount > 0) m.sync["resend"]();
      if (ms.every((m) => m.kv.queued.length === 0 && m.sync.unsentCount === 0)) break;
    }
    for (const m of ms) m.kv.deliver();
    await tick();
    for (const m of ms) await m.sync.settled();
    const want = bucket.latest.has("d.rule.cg") ? last(bucket) : null;
    const got = ms.map((m) => held(m) ?? null);
    if (got[0] !== want || got[1] !== want) throw new Error(`seed ${seed}: bucket's last revision holds ${want}, a holds ${got[0]}, b holds ${got[1]}`);
    for (const s of syncs.splice(0)) s.stop();
  }
}, 60_000);
