/**
 * The console as a workbench, in headless Chromium: write a stream and a rule in the SQL editor
 * (a typo shows eKuiper's message, the caret and "did you mean" in place, the fix applies), edit a
 * rule with a bad definition and see it keep the old one, run a trial on the live MQTT feed and
 * see its rows arrive, break a payload and find the error grouped with its payload, and see the
 * connection's live status. Screenshots land in test/server/console/screenshots/.
 */
import { expect, test } from "bun:test";
import { waitFor } from "../../helpers/runtime.ts";
import { consoleStage } from "./stage.ts";

const stage = consoleStage();

test(
  "write a stream and a rule with a typo: the caret and the fix in place, then create them",
  async () => {
    const { page } = stage.b;
    await page.goto(`${stage.d.base}/ui#/streams`);
    // A missing parenthesis: the parser's message and its place, as the CLI shows it.
    await page.fill("#create-sql", 'CREATE STREAM demo (temperature FLOAT, humidity BIGINT WITH (TYPE="mqtt", DATASOURCE="wb/demo", FORMAT="json")');
    await page.locator('#create-sql-diag [data-k="caret"]').filter({ hasText: "^" }).waitFor();
    expect(await page.textContent('#create-sql-diag [data-k="where"]')).toMatch(/^line 1, column \d+$/);
    expect(await page.locator(".editor .hl .bad").count()).toBeGreaterThan(0);
    await stage.b.screenshot("w01-stream-typo");
    await page.fill("#create-sql", 'CREATE STREAM demo (temperature FLOAT, humidity BIGINT) WITH (TYPE="mqtt", DATASOURCE="wb/demo", FORMAT="json")');
    await page.locator("#create-sql-diag .ok").filter({ hasText: "valid" }).waitFor();
    await page.click("#create-run");
    await page.locator("#streams-msg .ok").filter({ hasText: "Stream demo is created." }).waitFor();
    await page.locator('#streams details[data-name="demo"]').waitFor();

    // A rule: completion offers the stream's fields; a misspelt column gets "did you mean".
    await page.click('a[href="#/rules"]');
    await page.fill("#new-rule-id", "wb");
    await page.locator("#new-rule-sql").click();
    await page.keyboard.type("SELECT hum");
    await page.locator('#new-rule-sql-complete [data-choice="humidity"]').waitFor();
    await page.keyboard.press("Tab");
    expect(await page.inputValue("#new-rule-sql")).toBe("SELECT humidity");
    await page.fill("#new-rule-sql", "SELECT temperature * 2 AS t, humidity\nFROM demo WHERE temperatur > 20");
    const diag = page.locator("#new-rule-sql-diag");
    await diag.locator('[data-k="message"]').filter({ hasText: "unknown field temperatur" }).waitFor();
    expect(await diag.locator('[data-k="where"]').textContent()).toBe("line 2, column 17");
    expect(await diag.locator('[data-k="caret"]').textContent()).toBe("  at sql:2:17\n  2 | FROM demo WHERE temperatur > 20\n    |                 ^^^^^^^^^^\n  did you mean temperature? (a column)\n");
    expect(await page.locator("#new-rule-sql").locator("xpath=..").locator(".hl .bad").allTextContents()).toEqual(["temperatur"]);
    await stage.b.screenshot("w02-rule-typo");
    await diag.locator('[data-k="fix"]').click();
    expect(await page.inputValue("#new-rule-sql")).toBe("SELECT temperature * 2 AS t, humidity\nFROM demo WHERE temperature > 20");
    await diag.locator(".ok").filter({ hasText: "valid" }).waitFor();
    // Actions from the sinks' metadata: only what differs from a default is written.
    await page.fill("#new-rule-actions", "[]");
    await page.selectOption("#sink-type", "mqtt");
    await page.locator("#sink-prop-topic").fill("wb/out");
    await page.locator("#sink-prop-retained").check();
    await page.click("#sink-add");
    expect(JSON.parse(await page.inputValue("#new-rule-actions"))).toEqual([{ mqtt: { topic: "wb/out", retained: true } }]);
    await stage.b.screenshot("w02b-sink-form");
    await page.fill("#new-rule-actions", "[]");
    await page.selectOption("#sink-type", "nop");
    await page.click("#sink-add");
    expect(JSON.parse(await page.inputValue("#new-rule-actions"))).toEqual([{ nop: {} }]);
    await page.click("#new-rule-create");
    await page.locator("#rules-msg .ok").filter({ hasText: "Rule wb was created successfully." }).waitFor();
    await page.locator('tr[data-rule="wb"] .state').filter({ hasText: "running" }).waitFor();
    expect(stage.unexpected()).toEqual([]);
  },
  60_000,
);

test(
  "edit a rule: a bad definition is refused in place and the rule keeps running the old one; a good one restarts it",
  async () => {
    const { page } = stage.b;
    await page.goto(`${stage.d.base}/ui#/rules/wb`);
    await page.locator("#rule-edit-open summary").click();
    await page.fill("#edit-sql", "SELECT temperature FROM demo WHERE nosuch > 1");
    await page.locator('#edit-sql-diag [data-k="message"]').filter({ hasText: "unknown field nosuch" }).waitFor();
    await page.click("#edit-save");
    await page.locator('#edit-msg [data-k="kept"]').waitFor();
    expect(await page.textContent("#edit-msg .err")).toContain("unknown field nosuch");
    const stored = JSON.parse((await stage.d.call("GET", "/rules/wb")).text) as { sql: string };
    expect(stored.sql).toBe("SELECT temperature * 2 AS t, humidity\nFROM demo WHERE temperature > 20");
    await page.locator('#rule-state [data-state="running"]').waitFor();
    await stage.b.screenshot("w03-edit-refused");
    await page.fill("#edit-sql", "SELECT temperature * 3 AS t, humidity FROM demo WHERE temperature > 20");
    await page.locator("#edit-sql-diag .ok").waitFor();
    await page.click("#edit-save");
    await page.locator("#edit-msg .ok").filter({ hasText: "Rule wb was updated successfully." }).waitFor();
    await page.locator("#rule-def").filter({ hasText: "temperature * 3" }).waitFor();
    expect(stage.unexpected([/HTTP 400: PUT .*\/rules\/wb$/, /status of 400/])).toEqual([]);
    stage.b.problems.splice(0);
  },
  60_000,
);

test(
  "run it: a trial on the live feed shows rows as they come; a broken payload is one grouped error with its payload",
  async () => {
    const { page } = stage.b;
    let n = 0;
    stage.feeder = setInterval(() => stage.client.publish("wb/demo", JSON.stringify({ temperature: 20 + (n++ % 10), humidity: n })), 50);
    await page.goto(`${stage.d.base}/ui#/trial`);
    await page.fill("#trial-sql", "SELECT temperature, humidity FROM demo WHERE temperature > 25");
    await page.click("#trial-start");
    await page.locator("#trial-out").filter({ hasText: /"temperature":2[6-9]/ }).waitFor({ timeout: 15_000 });
    const first = (await page.textContent("#trial-out"))!.split("\n").filter(Boolean).length;
    await page.locator("#trial-msg .ok").filter({ hasText: new RegExp(`^(?!${first} results)\\d+ results`) }).waitFor({ timeout: 15_000 });
    await stage.b.screenshot("w04-trial-live");
    await page.click("#trial-stop");

    // Fifteen broken payloads: one row, counted 15 times, with the payload that broke.
    for (let i = 0; i < 15; i++) stage.client.publish("wb/demo", "{bad json " + i);
    await page.goto(`${stage.d.base}/ui#/rules/wb`);
    const row = page.locator("#rule-errors tr[data-node]").filter({ hasText: "invalid character" });
    await row.locator('[data-k="count"]').filter({ hasText: "15" }).waitFor({ timeout: 15_000 });
    expect(await page.locator("#rule-errors tr[data-node]").count()).toBe(1);
    expect(await row.locator('[data-k="payload"]').textContent()).toBe("{bad json 14");
    await page.locator('#rule-topo g.bad').first().waitFor();
    await stage.b.screenshot("w05-errors-grouped");
    expect(stage.unexpected()).toEqual([]);
  },
  60_000,
);

test(
  "a data peek, off until asked, shows the last rows each node took in and pushed out",
  async () => {
    const { page } = stage.b;
    await page.goto(`${stage.d.base}/ui#/rules/wb`);
    await page.locator("#peek-msg").filter({ hasText: "Off" }).waitFor();
    expect(await page.locator("#peek tr").count()).toBe(0);
    await page.click("#peek-toggle");
    const filterOut = page.locator('#peek tr[data-node="op_3_filter"] [data-k="out"] pre');
    await filterOut.first().waitFor({ timeout: 10_000 });
    // The filter passes only rows over 20; what it took in (the decoder's output) is shown beside.
    for (const t of await filterOut.allTextContents()) expect((JSON.parse(t) as { temperature: number }).temperature).toBeGreaterThan(20);
    await page.locator('#peek tr[data-node="op_3_filter"] [data-k="in"] pre').first().waitFor();
    await page.locator('#peek tr[data-node="sink_nop_0"] [data-k="in"] pre').first().waitFor();
    await stage.b.screenshot("w06-peek");
    await page.click("#peek-toggle");
    await page.locator("#peek-msg").filter({ hasText: "Off." }).waitFor();
    expect(stage.unexpected()).toEqual([]);
  },
  60_000,
);

test(
  "a trace: pick a recorded message and see its span tree through the nodes with timings and data",
  async () => {
    const { page } = stage.b;
    await page.goto(`${stage.d.base}/ui#/rules/wb`);
    await page.click("#trace-start");
    await page.locator("#trace-msg .ok").filter({ hasText: "Tracing every message." }).waitFor();
    await waitFor(async () => (JSON.parse((await stage.d.call("GET", "/trace/rule/wb?limit=5")).text) as string[]).length >= 3, "three traces of rule wb", 10_000, 100);
    await page.click("#trace-stop");
    await page.locator("#trace-msg .ok").filter({ hasText: "Tracing stopped." }).waitFor();
    await page.locator('#trace-list option[value]:not([value=""])').first().waitFor({ state: "attached" });
    const spans = page.locator("#trace-spans tbody tr");
    await spans.first().waitFor();
    const names = await page.locator("#trace-spans tbody tr").evaluateAll((rows) => rows.map((r) => r.getAttribute("data-span")));
    expect(names[0]).toBe("source_demo");
    expect(names).toContain("op_2_decoder");
    expect(await spans.first().locator('[data-k="start"]').textContent()).toBe("+0 µs");
    for (const t of await page.locator('#trace-spans [data-k="duration"]').allTextContents()) expect(t).toMatch(/^\d+(\.\d+)? (ms|µs)$/);
    expect(await spans.first().locator("pre.payload").textContent()).toContain('"temperature"');
    await stage.b.screenshot("w07-trace");
    expect(stage.unexpected()).toEqual([]);
  },
  60_000,
);

// Page functions (run in the browser by page.evaluate) use its globals, typed loosely here.
declare const document: { querySelectorAll(s: string): Iterable<any>; documentElement: { scrollWidth: number } };
declare const window: { innerWidth: number };

/** Labels of the topology wider than their box (none should be). */
function clippedLabels(): string[] {
  const out: string[] = [];
  for (const g of document.querySelectorAll("#rule-topo g.node")) {
    const box = Number(g.querySelector("rect")!.getAttribute("width"));
    for (const t of g.querySelectorAll("text")) // 8 px of padding on the left, at least 6 on the right.
    if ((t as { getBBox(): { width: number } }).getBBox().width + 14 > box) out.push(t.textContent ?? "");
  }
  return out;
}

test(
  "layout: at 1280 px no topology label overflows its box; at 420 px every page fits the width",
  async () => {
    const { page } = stage.b;
    await page.goto(`${stage.d.base}/ui#/rules/wb`);
    await page.locator("#rule-topo g.node").first().waitFor();
    expect(await page.evaluate(clippedLabels)).toEqual([]);
    await page.setViewportSize({ width: 420, height: 860 });
    try {
      for (const [name, hash, ready] of [
        ["overview", "#/", '[data-spark="in"]'],
        ["rules", "#/rules", 'tr[data-rule="wb"]'],
        ["rule", "#/rules/wb", "#rule-topo g.node"],
        ["streams", "#/streams", '#streams details[data-name="demo"]'],
        ["trial", "#/trial", "#trial-sql"],
        ["connections", "#/config", "#connections table"],
      ] as const) {
        await page.goto(`${stage.d.base}/ui${hash}`);
        await page.locator(ready).first().waitFor();
        const [scroll, inner] = await page.evaluate(() => [document.documentElement.scrollWidth, window.innerWidth]);
        expect([name, scroll]).toEqual([name, inner]);
        await stage.b.screenshot(`n-${name}`);
      }
    } finally {
      await page.setViewportSize({ width: 1280, height: 860 });
    }
    expect(stage.unexpected()).toEqual([]);
  },
  60_000,
);

/** The first `/ui/events` sample in which `ok` holds (10 s at most). */
async function sampleWhere(ok: (s: Sample) => boolean): Promise<Sample> {
  const ctl = new AbortController();
  const timer = setTimeout(() => ctl.abort(), 10_000);
  const res = await fetch(`${stage.d.base}/ui/events`, { signal: ctl.signal });
  let buf = "";
  try {
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      buf += new TextDecoder().decode(chunk);
      for (let i = buf.indexOf("\n\n"); i >= 0; i = buf.indexOf("\n\n")) {
        const block = buf.slice(0, i);
        buf = buf.slice(i + 2);
        if (!block.startsWith("event: sample")) continue;
        const s = JSON.parse(block.slice(block.indexOf("data: ") + 6)) as Sample;
        if (ok(s)) return s;
      }
    }
  } finally {
    clearTimeout(timer);
    ctl.abort();
  }
  throw new Error("no such sample");
}

interface Sample {
  totals: { in: number };
  sources: number;
  rules: { id: string; inRate: number }[];
}

test(
  "honest numbers: three rules on one feed count its In once; connections show live status and their rules; charts have axes and a range",
  async () => {
    const { page } = stage.b;
    for (const id of ["wb2", "wb3"]) expect((await stage.d.call("POST", "/rules", { id, sql: "SELECT * FROM demo", actions: [{ nop: {} }] })).status).toBe(201);
    const s = await sampleWhere((x) => x.rules.length === 3 && x.rules.every((r) => r.inRate > 0));
    expect(s.sources).toBe(1);
    expect(s.totals.in).toBe(Math.max(...s.rules.map((r) => r.inRate)));
    expect(s.totals.in).toBeLessThan(s.rules.reduce((n, r) => n + r.inRate, 0) / 2);

    await page.goto(`${stage.d.base}/ui#/`);
    await page.locator('[data-spark="in"] polyline').first().waitFor();
    expect(await page.locator('[data-spark="in"] text.tick').count()).toBeGreaterThanOrEqual(7);
    expect(await page.textContent('[data-spark="in"] [data-k="range"]')).toMatch(/^\d\d:\d\d:\d\d – \d\d:\d\d:\d\d \(last 10 minutes\)$/);
    expect(await page.locator('[data-spark="in"] text.unit').textContent()).toBe("records/s");
    await stage.b.screenshot("w08-overview");

    await page.click('a[href="#/config"]');
    const conn = page.locator('#connections tr[data-conn="stream demo"]');
    await conn.locator('[data-k="status"]').filter({ hasText: "connected" }).waitFor();
    expect(await conn.locator('[data-k="rules"]').textContent()).toBe("wb, wb2, wb3");
    await stage.b.screenshot("w09-connections");
    // The broker goes away: the stream's clients report it.
    await stage.broker.stop();
    await conn.locator('[data-k="status"]').filter({ hasText: /^(connecting|disconnected)$/ }).waitFor({ timeout: 15_000 });
    await stage.b.screenshot("w10-connection-lost");
    expect(stage.unexpected()).toEqual([]);
  },
  60_000,
);
