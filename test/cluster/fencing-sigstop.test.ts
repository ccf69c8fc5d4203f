/**
 * An owner paused past its lease (SIGSTOP: a long GC pause, a stalled SD card) and then continued
 * (SIGCONT), in the JetStream scenario of test/helpers/js-scenario.ts with 2 members: the survivor
 * claims its partitions with a newer epoch meanwhile; the paused member, once it runs again,
 * writes no checkpoint over the survivor's (its watch or the server refuses it), acknowledges
 * nothing, sends no result, gives the partitions up and later rejoins; the deduplicated output
 * equals a single replay — its late output, if any, is suppressed within the dedup window, never
 * stored twice — and the stored messages carry the epoch of the owner that sent them.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { Kvm } from "@nats-io/kv";
import { NatsServer } from "../helpers/nats.ts";
import { compare, connect, countPublishes, createRule, createStreams, dataSet, drained, jetstreamManager, publish, recordsIn, replay, startGroup, stored, takenOver, until, type Group } from "../helpers/js-scenario.ts";

let nats: NatsServer;
let group: Group | undefined;

beforeAll(async () => {
  nats = await NatsServer.start();
});

afterAll(async () => {
  for (const m of group?.members ?? []) {
    m.proc.kill("SIGCONT");
    await m.stop("SIGKILL");
  }
  await nats?.stop();
});

test("an owner stopped past its lease and continued writes nothing over its successor's claim, stops, rejoins, and its output is not duplicated", async () => {
  const data = dataSet(20, 3000);
  const nc = await connect({ servers: nats.url });
  const jsm = await jetstreamManager(nc);
  await createStreams(jsm);
  const [want] = await Promise.all([replay(data), publish(nc, data.slice(0, 1000))]);
  const g = (group = await startGroup(nats, "pause", 2, true));
  const pubs = countPublishes(nc, "p");
  await createRule(g, nats, "p");
  const [m0, m1] = g.members as [(typeof g.members)[0], (typeof g.members)[0]];
  const m1Parts = (JSON.parse((await m1.call("GET", "/cluster")).text) as { partitionedRules: { r: number[] } }).partitionedRules.r;
  expect(m1Parts.length).toBeGreaterThan(0);
  const rest = publish(nc, data.slice(1000));
  await until(async () => (await recordsIn(g)) >= 1500, 20_000, "half the input taken");

  m1.proc.kill("SIGSTOP");
  // The survivor claims m1's partitions once m1's lease (2 s) lapses, and reads on.
  await takenOver([m0], 1000);
  const kv = await new Kvm(nc).open("floe_pause_state");
  const manifest = async (p: number) => JSON.parse(new TextDecoder().decode((await kv.get(`m.${Buffer.from("r").toString("base64url")}.${p}`))!.value)) as { owner: string; epoch: number };
  const claimed = new Map<number, number>();
  for (const p of m1Parts) {
    const m = await manifest(p);
    expect(m.owner).toBe("m0");
    claimed.set(p, m.epoch);
  }
  await rest;

  m1.proc.kill("SIGCONT");
  // m1 finds its lease lapsed and its partitions claimed: it stops them without writing over m0's.
  await until(() => m1Parts.every((p) => m1.stderr().includes(`cluster: partition ${Buffer.from("r").toString("base64url")}.${p} is no longer this member's`) || m1.stderr().includes(`partition ${p} stopped here`)), 10_000, "m1 noticed");
  for (const p of m1Parts) {
    const m = await manifest(p);
    // Still m0's claim (or a later, higher epoch once m1 rejoined and took it back by a release): never m1's old epoch.
    expect(m.epoch).toBeGreaterThanOrEqual(claimed.get(p)!);
    if (m.owner === "m1") expect(m.epoch).toBeGreaterThan(claimed.get(p)!);
  }

  if (process.env.FENCE_DEBUG) console.log(m1.stderr().split("\n").filter((l) => /partition|refused|cluster/.test(l)).join("\n"));
  await until(() => drained(jsm, "p"), 30_000, "every partition read and acknowledged");
  let rows = await stored(nc, "p");
  await until(async () => (rows = await stored(nc, "p")).filter((r) => r.deviceId !== "tick").length >= want.length, 10_000, "all rows stored").catch(() => undefined);
  const c = compare(rows, want);
  pubs.stop();
  // Every stored message names the epoch of the owner that sent it.
  const first = await jsm.streams.getMessage("OUT", { last_by_subj: "out.p" });
  expect(Number(first!.header.get("Floe-Epoch"))).toBeGreaterThanOrEqual(1);
  await nc.close();
  expect(c).toMatchObject({ exact: true, lost: 0, wrong: 0, extra: 0, duplicateKeys: 0 });
  expect(c.rows).toBe(want.length);
}, 60_000);
