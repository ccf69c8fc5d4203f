/**
 * The web console in a real browser (headless Chromium): a stream and a rule created through the
 * forms, MQTT data fed from a real Mosquitto, the rates moving, the topology drawn, the rule
 * stopped, a trial run, the token prompt under JWT. Screenshots land in test/server/console/screenshots/.
 */
import { expect, test } from "bun:test";
import { createSign, generateKeyPairSync } from "node:crypto";
import { startFloe, tempHome } from "../daemon.ts";
import { consoleStage } from "./stage.ts";

const stage = consoleStage();

test(
  "create a stream and a rule in the console, feed MQTT, watch the rates and the topology, stop it",
  async () => {
    const { page } = stage.b;
    await page.goto(`${stage.d.base}/ui`);
    await page.locator('[data-k="version"]').filter({ hasText: /\d+\.\d+/ }).waitFor();
    await stage.b.screenshot("01-overview-empty");

    // Streams: a bad statement shows the REST API's own error, then a good one is created.
    await page.click('a[href="#/streams"]');
    const bad = "CREATE STREAM demo (temperature FLOAT WITH (TYPE=\"mqtt\")";
    await page.fill("#create-sql", bad);
    await page.click("#create-run");
    const want = JSON.parse((await stage.d.call("POST", "/streams", { sql: bad })).text).message as string;
    await page.locator("#streams-msg .err").filter({ hasText: want }).waitFor();
    expect(await page.textContent("#streams-msg")).toBe(want);
    const badRequests = stage.b.problems.splice(0).filter((p) => !/status of 400|HTTP 400: POST .*\/streams$/.test(p));
    expect(badRequests).toEqual([]);
    await page.fill("#create-sql", 'CREATE STREAM demo (temperature FLOAT) WITH (TYPE="mqtt", DATASOURCE="console/demo", FORMAT="json")');
    await page.click("#create-run");
    await page.locator("#streams-msg .ok").filter({ hasText: "Stream demo is created." }).waitFor();
    await page.locator('#streams details[data-name="demo"]').waitFor();
    await stage.b.screenshot("02-streams");

    // Rules: create one (it starts), feed it, see the rates move.
    await page.click('a[href="#/rules"]');
    await page.fill("#new-rule-id", "hot");
    await page.fill("#new-rule-sql", "SELECT temperature * 2 AS t FROM demo WHERE temperature > 20");
    await page.fill("#new-rule-actions", '[{"nop": {}}]');
    await page.click("#new-rule-create");
    await page.locator("#rules-msg .ok").filter({ hasText: "Rule hot was created successfully." }).waitFor();
    const row = page.locator('tr[data-rule="hot"]');
    await row.locator(".state").filter({ hasText: "running" }).waitFor();
    let n = 0;
    stage.feeder = setInterval(() => stage.client.publish("console/demo", JSON.stringify({ temperature: n++ % 2 ? 30 : 10 })), 20);
    await row.locator('[data-k="in"]').filter({ hasText: /^[1-9][\stage.d.]* (k\/)?\/?s|^[1-9]/ }).waitFor({ timeout: 15_000 });
    await row.locator('[data-k="records-out"]').filter({ hasText: /^[1-9]/ }).waitFor();
    await stage.b.screenshot("03-rules-running");

    // The rule's page: SQL, topology with per-node rates.
    await row.locator("a").click();
    await page.locator("#rule-def").filter({ hasText: "SELECT temperature * 2" }).waitFor();
    const topo = page.locator("#rule-topo svg.topo-svg");
    await topo.waitFor();
    expect(await topo.locator("g[data-node]").count()).toBeGreaterThanOrEqual(3);
    await topo.locator('g.source text').filter({ hasText: /in [1-9]/ }).first().waitFor({ timeout: 10_000 });
    await page.locator('#rule-nodes tr[data-node^="sink_nop"]').waitFor();
    await stage.b.screenshot("04-rule-topology");
    await stage.b.screenshot("04-rule-topology-top", { x: 0, y: 0, width: 1280, height: 560 });

    // Stop it: the state follows, the rates fall to zero.
    await page.click('button[data-action="stop"]');
    await page.locator('#rule-state [data-state="stopped"]').waitFor();
    clearInterval(stage.feeder);
    stage.feeder = undefined;
    await stage.b.screenshot("05-rule-stopped");

    // The overview's sparklines carry the burst.
    await page.click('a[href="#/"]');
    await page.locator('[data-spark="in"] polyline').first().waitFor();
    expect(await page.textContent('[data-k="state-stopped"]')).toBe("1");
    await stage.b.screenshot("06-overview");
    await page.emulateMedia({ colorScheme: "dark" });
    await stage.b.screenshot("07-overview-dark");
    await page.emulateMedia({ colorScheme: "light" });

    expect(stage.unexpected()).toEqual([]);
  },
  90_000,
);

test(
  "a trial run streams its rows into the page; confKeys and connections are shown",
  async () => {
    const { page } = stage.b;
    await page.click('a[href="#/trial"]');
    await page.fill("#trial-sql", "SELECT temperature FROM demo WHERE temperature > 1");
    await page.fill("#trial-mock", JSON.stringify({ demo: { data: [{ temperature: 1 }, { temperature: 2 }, { temperature: 3 }], interval: 20, loop: false } }));
    await page.click("#trial-start");
    await page.locator("#trial-out").filter({ hasText: '"temperature":3' }).waitFor({ timeout: 10_000 });
    expect(await page.textContent("#trial-out")).not.toContain('"temperature":1}');
    await stage.b.screenshot("08-trial");
    await page.click("#trial-stop");

    await page.click('a[href="#/config"]');
    await page.locator("#connections").filter({ hasText: "No connections." }).waitFor();
    await page.selectOption("#conf-type", "mqtt");
    await page.locator("#confkeys").filter({ hasText: '"default"' }).waitFor();
    await stage.b.screenshot("09-config");
    expect(stage.unexpected()).toEqual([]);
  },
  60_000,
);

test(
  "with JWT on, the console asks for a token and then works",
  async () => {
    const { publicKey, privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
    const b64 = (o: object) => Buffer.from(JSON.stringify(o)).toString("base64url");
    const head = `${b64({ alg: "RS256", typ: "JWT" })}.${b64({ iss: "sample_key.pub", aud: "eKuiper", exp: Math.floor(Date.now() / 1000) + 3600 })}`;
    const token = `${head}.${createSign("RSA-SHA256").update(head).sign(privateKey).toString("base64url")}`;
    const jd = await startFloe(tempHome({ "mgmt/sample_key.pub": publicKey.export({ type: "spki", format: "pem" }).toString() }), { KUIPER__BASIC__AUTHENTICATION: "true" });
    // A page of the same browser (a second launch took 8 s on a loaded machine); another origin, so its own session.
    const jb = await stage.b.newPage({ dark: true });
    try {
      await jb.page.goto(`${jd.base}/ui`);
      await jb.page.locator("#token").waitFor();
      await jb.screenshot("10-token-prompt");
      expect(jb.problems.splice(0).filter((p) => !/status of 401|HTTP 401: GET .*\/ui\/events$/.test(p))).toEqual([]);
      await jb.page.fill("#token", token);
      await jb.page.click("#token-save");
      await jb.page.locator('[data-k="version"]').filter({ hasText: /\d+\.\d+/ }).waitFor();
      await jb.page.click('a[href="#/streams"]');
      await jb.page.locator("#streams").filter({ hasText: "No streams." }).waitFor();
      expect(jb.problems).toEqual([]);
    } finally {
      await jb.close();
      await jd.stop();
    }
  },
  60_000,
);
