/** The web console's server side: the embedded assets, `/ui/events`, auth, `basic.console`. */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { startFloe, tempHome, type DaemonProc } from "../daemon.ts";

const ROOT = join(import.meta.dir, "..", "..", "..");
let d: DaemonProc;

beforeAll(async () => {
  d = await startFloe();
});

afterAll(async () => {
  await d?.stop();
});

/** Reads SSE events from `path` until `until` says enough (or 10 s pass). */
async function events(base: string, path: string, until: (evs: { event: string; data: unknown }[]) => boolean, headers: Record<string, string> = {}): Promise<{ event: string; data: unknown }[]> {
  const ctl = new AbortController();
  const timer = setTimeout(() => ctl.abort(), 10_000);
  const res = await fetch(base + path, { headers, signal: ctl.signal });
  expect(res.status).toBe(200);
  expect(res.headers.get("Content-Type")).toBe("text/event-stream");
  const out: { event: string; data: unknown }[] = [];
  let buf = "";
  try {
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      buf += new TextDecoder().decode(chunk);
      let i: number;
      while ((i = buf.indexOf("\n\n")) >= 0) {
        const block = buf.slice(0, i);
        buf = buf.slice(i + 2);
        const ev = /^event: (.*)$/m.exec(block)?.[1] ?? "message";
        const data = /^data: (.*)$/m.exec(block)?.[1];
        if (data !== undefined) out.push({ event: ev, data: JSON.parse(data) });
      }
      if (until(out)) break;
    }
  } finally {
    clearTimeout(timer);
    ctl.abort();
  }
  return out;
}

test("the built console script (generated/console/app.js) is up to date with its sources (make ui)", async () => {
  const built = await Bun.build({ entrypoints: [join(ROOT, "lib/server/console/ui/main.ts")], minify: true, target: "browser" });
  expect(built.success).toBe(true);
  const fresh = await built.outputs[0]!.text();
  expect(readFileSync(join(ROOT, "generated/console/app.js"), "utf8")).toBe(fresh);
});

test("/ui serves the page and /ui/app.js the embedded script", async () => {
  const page = await d.call("GET", "/ui");
  expect(page.status).toBe(200);
  expect(page.headers.get("Content-Type")).toBe("text/html; charset=utf-8");
  expect(page.text).toContain('<script type="module" src="/ui/app.js"></script>');
  const js = await d.call("GET", "/ui/app.js");
  expect(js.status).toBe(200);
  expect(js.headers.get("Content-Type")).toBe("text/javascript; charset=utf-8");
  expect(js.text).toBe(readFileSync(join(ROOT, "generated/console/app.js"), "utf8"));
  expect((await d.call("GET", "/ui/nothing")).status).toBe(404);
  expect((await d.call("POST", "/ui")).status).toBe(405);
});

test("/ui/events sends the history, then samples with every rule's state and rates, and a rule's topology on request", async () => {
  expect((await d.call("POST", "/streams", { sql: 'CREATE STREAM cev (v BIGINT) WITH (TYPE="memory", DATASOURCE="cev", FORMAT="json")' })).status).toBe(201);
  expect((await d.call("POST", "/rules", { id: "cev", sql: "SELECT v FROM cev", actions: [{ nop: {} }] })).status).toBe(201);
  const evs = await events(d.base, "/ui/events?rule=cev", (e) => e.some((x) => x.event === "sample" && (x.data as { rule?: { topo?: unknown } }).rule?.topo));
  expect(evs[0]!.event).toBe("history");
  expect(Array.isArray(evs[0]!.data)).toBe(true);
  const s = evs.findLast((x) => x.event === "sample")!.data as {
    system: { version: string; rss: number; lagMs: number };
    states: Record<string, number>;
    rules: { id: string; state: string; inRate: number }[];
    rule: { id: string; topo: { sources: string[]; edges: Record<string, string[]> }; nodes: { kind: string; name: string }[]; errors: unknown[] };
  };
  expect(s.system.version).toBe("0.1.0");
  expect(s.system.rss).toBeGreaterThan(0);
  expect(s.system.lagMs).toBeGreaterThanOrEqual(0);
  expect(s.states.running).toBe(1);
  expect(s.rules).toEqual([expect.objectContaining({ id: "cev", state: "running", inRate: 0 })]);
  expect(s.rule.id).toBe("cev");
  expect(s.rule.topo.sources).toEqual(["source_cev"]);
  expect(s.rule.nodes.map((n) => n.kind)).toContain("sink");
  expect(s.rule.errors).toEqual([]);
});

test("with JWT on, the page and script load without a token but /ui/events needs one", async () => {
  const j = await startFloe(tempHome(), { KUIPER__BASIC__AUTHENTICATION: "true" });
  try {
    expect((await j.call("GET", "/ui")).status).toBe(200);
    expect((await j.call("GET", "/ui/app.js")).status).toBe(200);
    const ev = await j.call("GET", "/ui/events");
    expect(ev.status).toBe(401);
    expect(ev.text).toBe("missing_token\n");
  } finally {
    await j.stop();
  }
});

test("basic.console: false turns the console off (404 like any unknown path)", async () => {
  const off = await startFloe(tempHome({ "kuiper.yaml": "basic:\n  console: false\n" }));
  try {
    for (const p of ["/ui", "/ui/app.js", "/ui/events"]) expect((await off.call("GET", p)).status).toBe(404);
    expect((await off.call("GET", "/ping")).status).toBe(200);
  } finally {
    await off.stop();
  }
});
