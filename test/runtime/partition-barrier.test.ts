/**
 * Whose results a checkpoint's barrier waits for (runtime/execution.ts): a single run's counts
 * a result once it is written through to its sink's cache (the restart sends it from there); a
 * group partition's run (fenced) only once it is delivered, since another member restores its
 * checkpoints after a failover and has no copy of this member's cache.
 */
import { expect, test } from "bun:test";
import { Rule } from "../../lib/runtime/rule.ts";
import { checkpointStore } from "../../lib/store/checkpoint.ts";
import { HttpCollector } from "../helpers/http.ts";
import { streams, testRuntime, waitFor } from "../helpers/runtime.ts";

async function run(id: string, fenced: boolean): Promise<void> {
  const t = testRuntime();
  const http = await HttpCollector.create();
  const defs = streams(`CREATE STREAM s () WITH (TYPE="memory", DATASOURCE="${id}/in")`);
  const def = {
    id,
    sql: "SELECT count(*) AS c, max(n) AS m FROM s GROUP BY COUNTWINDOW(2)",
    actions: [{ rest: { url: http.url, method: "post", sendSingle: true, timeout: 500, enableCache: true, resendInterval: 10 } }],
    options: { qos: 1, checkpointInterval: 10 },
  };
  const rule = await Rule.create(def, defs, t.env, t.hub, fenced ? { fence: () => true } : {}).start();
  const latest = () => checkpointStore(t.env.dataDir).latest(id) ?? "";
  try {
    // The window fires on the second row (its result waits in the cache: the endpoint is down) and holds the third.
    for (const n of [1, 2, 777]) await t.env.pubsub.publish(`${id}/in`, { n });
    if (!fenced) {
      await waitFor(() => latest().includes("777"), "a checkpoint holding the third row while the result waits in the cache", 5000);
      return;
    }
    await Bun.sleep(300);
    expect(latest()).not.toContain("777");
    http.up();
    await waitFor(() => http.bodies.length === 1, "the result delivered");
    await waitFor(() => latest().includes("777"), "a checkpoint holding the third row once the result is delivered", 5000);
  } finally {
    await rule.stop();
    http.down();
  }
}

test("a single run's checkpoint counts a result written through to its sink's cache", () => run("cached", false));

test("a group partition's checkpoint counts a result only once it is delivered", () => run("partition", true));
