/**
 * Two rules in one runtime: one matches patterns that take a backtracking engine seconds per row
 * (`(a+)+$` over 27 characters took 1–2.7 s per row before re2js), the other must keep producing.
 * What is asserted is the longest time the event loop is held while both run, not a rate.
 */
import { expect, test } from "bun:test";
import type { Rows } from "../../lib/connectors/memory/pubsub.ts";
import { metric, streams, testRuntime, waitFor } from "../helpers/runtime.ts";

const defs = streams(
  `CREATE STREAM evil () WITH (TYPE="memory", DATASOURCE="evil/in")`,
  `CREATE STREAM steady () WITH (TYPE="memory", DATASOURCE="steady/in")`,
);

const EVIL_SQL =
  `SELECT regexp_matches(s, "(a+)+$") AS m, regexp_substr(s, "(a|aa)+c") AS f, ` +
  `regexp_replace(s, "(a*)*b$", "x") AS r, s LIKE "%a%a%a%a%a%a%a%a%c" AS l, ` +
  `json_path_exists(o, "$.v[? @ =~ \\"(a|a)+$\\"]") AS j FROM evil`;

function count(rows: Rows): number {
  return Array.isArray(rows) ? rows.length : 1;
}

test("a rule matching pathological patterns does not stall another rule", async () => {
  const t = testRuntime();
  const evilRule = t.rule({ id: "evil", sql: EVIL_SQL, actions: [{ memory: { topic: "evil/out" } }] }, defs);
  const steadyRule = t.rule({ id: "steady", sql: "SELECT n FROM steady", actions: [{ memory: { topic: "steady/out" } }] }, defs);
  const evilOut: Rows[] = [];
  let steadyOut = 0;
  t.env.pubsub.subscribe("evil/out", (_t, rows) => (evilOut.push(rows), true), () => {});
  t.env.pubsub.subscribe("steady/out", (_t, rows) => ((steadyOut += count(rows)), true), () => {});
  const evil = await evilRule.start();
  const steady = await steadyRule.start();

  // The most CPU time the process spent between two ticks of a 5 ms timer while the rules run:
  // the work that held the event loop. (Wall-clock gaps also count the time a loaded machine
  // does not schedule the process at all.)
  let last = process.cpuUsage();
  let maxGapMs = 0;
  const probe = setInterval(() => {
    const d = process.cpuUsage(last);
    const gap = (d.user + d.system) / 1000;
    if (gap > maxGapMs) maxGapMs = gap;
    last = process.cpuUsage();
  }, 5);

  const ROWS = 40;
  for (let i = 0; i < ROWS; i++) {
    const s = "a".repeat(i % 2 ? 27 : 5_000) + "b";
    await t.env.pubsub.publish("evil/in", { s, o: { v: [s] } });
    await t.env.pubsub.publish("steady/in", { n: i });
  }
  await waitFor(() => steadyOut === ROWS && evilOut.flatMap((r) => r).length === ROWS, "both rules to emit every row");
  clearInterval(probe);

  expect(metric(evil, "op_2_project_0_exceptions_total")).toBe(0);
  const first = evilOut.flatMap((r) => r)[0];
  expect(first).toEqual({ m: false, f: "", r: "x", l: false, j: false });
  // A backtracking engine holds the loop for seconds of CPU on a single row of this input; the
  // bound leaves room for a loaded machine's scheduling (a gap of 239 ms was seen under load).
  expect(maxGapMs).toBeLessThan(1000);
  await evil.stop();
  await steady.stop();
});
