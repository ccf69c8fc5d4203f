/**
 * The scenario of docs/group.md at a small size: 20 devices, 3,000 messages over the
 * 12-partition JetStream subject, 2 members, one killed with -9 mid-stream and restarted; the
 * deduplicated output of the JetStream sink equals a single `floe run --replay` of the same data.
 * The member comes back right after the take-over, while the partitions it gets back may have no
 * checkpoint in the group yet.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { NatsServer } from "../helpers/nats.ts";
import { compare, connect, countPublishes, createRule, createStreams, dataSet, drained, jetstreamManager, publish, recordsIn, replay, startGroup, stored, takenOver, until, type Group } from "../helpers/js-scenario.ts";
import { startFloe } from "../server/daemon.ts";

let nats: NatsServer;
let group: Group | undefined;

beforeAll(async () => {
  nats = await NatsServer.start();
});

afterAll(async () => {
  for (const m of group?.members ?? []) await m.stop("SIGKILL");
  await nats?.stop();
});

test("a member killed mid-stream: the group's deduplicated output equals a single replay", async () => {
  const data = dataSet(20, 3000);
  const nc = await connect({ servers: nats.url });
  const jsm = await jetstreamManager(nc);
  await createStreams(jsm);
  const [want] = await Promise.all([replay(data), publish(nc, data.slice(0, 1000))]);
  const g = (group = await startGroup(nats, "js", 2, true));
  const pubs = countPublishes(nc, "k");
  await createRule(g, nats, "k");
  const rest = publish(nc, data.slice(1000));
  await until(async () => (await recordsIn(g)) >= 1500, 20_000, "half the input taken");
  g.members[1]!.proc.kill("SIGKILL");
  await rest;
  // Restarted as soon as the survivor runs the dead member's partitions: before their first group
  // checkpoint, so the member coming back waits for the survivor's release rather than reading along.
  await takenOver([g.members[0]!], 0);
  g.members[1] = await startFloe(g.members[1]!.dir, g.envs[1]!);
  await until(() => drained(jsm, "k"), 25_000, "every partition read and acknowledged");
  let rows = await stored(nc, "k");
  // The last windows are emitted when the ticks arrive; give the sinks a moment after the acknowledgements.
  await until(async () => (rows = await stored(nc, "k")).filter((r) => r.deviceId !== "tick").length >= want.length, 10_000, "all rows stored").catch(() => undefined);
  const c = compare(rows, want);
  if (!c.exact && process.env.JS_SCENARIO_DEBUG) {
    const w = new Map(want.map((r) => [`${r.deviceId}@${r.we}`, r]));
    const got = new Map(rows.map((r) => [`${r.deviceId}@${r.we}`, r]));
    for (const [k, r] of w) if (JSON.stringify(got.get(k)) !== JSON.stringify(r)) console.log("want", JSON.stringify(r), "got", JSON.stringify(got.get(k)));
    for (const m of g.members) console.log(m.stderr().split("\n").filter((l) => /partition|rewound|consumer/.test(l)).join("\n"));
  }
  pubs.stop();
  await nc.close();
  expect(c).toMatchObject({ exact: true, lost: 0, wrong: 0, extra: 0, duplicateKeys: 0 });
  expect(c.rows).toBe(want.length);
  expect(want.length).toBe(20 * 15);
}, 40_000);
