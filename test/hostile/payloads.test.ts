/**
 * Hostile connector payloads through real rules of a running daemon. Every format of the format
 * registry (`FORMATS`) is attacked (payload-cases.ts) or listed with the refusal that keeps
 * payloads from it; every source type of the source registry is classified (the byte sources
 * share the rule inlet's decoder, which the httppush carrier attacks here). For each hostile
 * payload: the decode error is counted on the `<i>_decoder` node with its text, or the payload
 * decodes to the row eKuiper's rules give; `/ping` answers within the bound while the payload is
 * decoded; the rule keeps running and the next good payload comes out intact.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { isByteSource, SOURCE_TYPES } from "../../lib/connectors/sources.ts";
import { FORMATS } from "../../lib/sql/create.ts";
import { waitFor } from "../helpers/runtime.ts";
import { FORMAT_CASES, NOT_ATTACKED, PROTO_SCHEMA, streamSql, type FormatCase, type Outcome } from "./payload-cases.ts";
import { freePort, startFloe, tempHome, type DaemonProc } from "./surface.ts";

/** As in compile.test.ts: generous for a loaded 2-core machine; a stalled loop is seconds. */
const PING_BOUND_MS = 1500;

/**
 * Every source type: whether it yields bytes (and so a decoder node), and how its payloads are
 * attacked. A type added to the registry fails the walk below until it is classified here.
 */
const SOURCES: Record<string, { readonly bytes: boolean; readonly how: string }> = {
  httppush: { bytes: true, how: "the carrier: every format's hostile payloads, below" },
  websocket: { bytes: true, how: "frames reach the same inlet decoder as httppush bodies" },
  mqtt: { bytes: true, how: "messages reach the same inlet decoder as httppush bodies" },
  nats: { bytes: true, how: "messages reach the same inlet decoder as httppush bodies" },
  redissub: { bytes: true, how: "messages reach the same inlet decoder as httppush bodies" },
  file: { bytes: true, how: "lines and array elements reach the same inlet decoder; the file is the operator's" },
  memory: { bytes: false, how: "rows published by other rules: nothing to decode" },
  simulator: { bytes: false, how: "rows from the operator's config: nothing to decode" },
  httppull: { bytes: false, how: "responses are decoded by lib/connectors/http/client.ts (responseType), attacked in test/connectors/http/pull-source.test.ts" },
  sql: { bytes: false, how: "rows from a database query: nothing to decode" },
};

const port = freePort();
let d: DaemonProc;

const out = (c: FormatCase) => join(d.dir, `${c.id}.jsonl`);
const lines = (c: FormatCase): string[] => (existsSync(out(c)) ? readFileSync(out(c), "utf8").split("\n").filter((l) => l !== "") : []);

async function status(c: FormatCase): Promise<Record<string, unknown>> {
  return JSON.parse((await d.call("GET", `/rules/p_${c.id}/status`)).text) as Record<string, unknown>;
}

/** POSTs `payload` to the case's endpoint while timing a `/ping` sent alongside it. */
async function push(c: FormatCase, payload: Uint8Array): Promise<{ status: number; pingMs: number }> {
  const sent = fetch(`http://127.0.0.1:${port}/${c.id}`, { method: "POST", body: payload, signal: AbortSignal.timeout(10_000) });
  const t0 = performance.now();
  const ping = await fetch(`${d.base}/ping`, { signal: AbortSignal.timeout(10_000) });
  const pingMs = performance.now() - t0;
  expect(ping.status).toBe(200);
  const res = await sent;
  await res.arrayBuffer();
  return { status: res.status, pingMs };
}

beforeAll(async () => {
  d = await startFloe(tempHome(), { KUIPER__SOURCE__HTTPSERVERPORT: String(port) });
  expect((await d.call("POST", "/schemas/protobuf", PROTO_SCHEMA)).status).toBe(201);
  for (const c of FORMAT_CASES) {
    const s = await d.call("POST", "/streams", { sql: streamSql(c) });
    if (s.status !== 201) throw new Error(`${c.id}: ${s.status} ${s.text}`);
    const r = await d.call("POST", "/rules", { id: `p_${c.id}`, sql: `SELECT * FROM p_${c.id}`, actions: [{ file: { path: out(c), fileType: "lines", sendSingle: true } }] });
    if (r.status !== 201) throw new Error(`${c.id}: ${r.status} ${r.text}`);
  }
  // Each endpoint is routed once its rule has started.
  for (const c of FORMAT_CASES) await waitFor(async () => (await status(c)).status === "running", `rule p_${c.id} running`);
}, 30_000);

afterAll(async () => {
  await d?.stop();
});

describe("the registries are walked", () => {
  test("every registered format is attacked or listed with a reason", () => {
    const attacked = new Set(FORMAT_CASES.map((c) => c.format));
    for (const f of FORMATS) expect(`${f}: ${attacked.has(f) ? "attacked" : f in NOT_ATTACKED ? "listed" : "neither attacked nor listed"}`).not.toContain("neither");
    for (const f of [...attacked, ...Object.keys(NOT_ATTACKED)]) expect(FORMATS.has(f)).toBe(true);
    for (const f of Object.keys(NOT_ATTACKED)) expect(attacked.has(f)).toBe(false);
  });

  test("every source type is classified, and the classification is the registry's", () => {
    expect(Object.keys(SOURCES).sort()).toEqual([...SOURCE_TYPES].sort());
    for (const t of SOURCE_TYPES) expect(`${t}: ${isByteSource(t)}`).toBe(`${t}: ${SOURCES[t]!.bytes}`);
  });

  test.each(Object.entries(NOT_ATTACKED))("format %s is refused before any payload, with its reason", async (format, { refusal }) => {
    const r = await d.call("POST", "/streams", { sql: `CREATE STREAM p_refused_${format} () WITH (TYPE="httppush", DATASOURCE="/refused", FORMAT="${format}", SCHEMAID="x.Y")` });
    expect(r.status).toBe(400);
    expect(JSON.parse(r.text).message).toContain(refusal);
  });
});

function check(want: Outcome, before: { exceptions: number; lines: number }, st: Record<string, unknown>, got: string[]): void {
  if ("err" in want) {
    expect(st.op_2_decoder_0_exceptions_total).toBe(before.exceptions + 1);
    const last = String(st.op_2_decoder_0_last_exception);
    if (typeof want.err === "string") expect(last).toBe(want.err);
    else expect(last).toMatch(want.err);
    // Nothing came out of it: the next line is the good payload's.
    expect(got.length).toBe(before.lines + 1);
  } else {
    expect(st.op_2_decoder_0_exceptions_total).toBe(before.exceptions);
    expect(got.length).toBe(before.lines + 2);
    expect(got[before.lines]).toBe(want.row);
  }
}

describe.each(FORMAT_CASES.map((c) => [c.id, c] as const))("%s payloads", (_id, c) => {
  test.each(c.hostile.map((h) => [h.name, h] as const))("%s: counted or decoded per eKuiper; /ping answers; the next good payload comes out intact", async (_name, h) => {
    const st0 = await status(c);
    const before = { exceptions: Number(st0.op_2_decoder_0_exceptions_total), lines: lines(c).length };
    const bad = await push(c, h.payload);
    expect(bad.status).toBe(200);
    expect(bad.pingMs).toBeLessThan(PING_BOUND_MS);
    expect((await push(c, c.good.payload)).status).toBe(200);
    const wantLines = before.lines + ("err" in h.want ? 1 : 2);
    await waitFor(() => lines(c).length >= wantLines, `${wantLines} lines from p_${c.id}`);
    const st = await status(c);
    expect(st.status).toBe("running");
    const got = lines(c);
    check(h.want, before, st, got);
    expect(got.at(-1)).toBe(c.good.row);
  });
});
