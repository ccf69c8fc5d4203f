/**
 * Exact proofs on a rule's sink output (bench.md §Method 7), streaming over NDJSON files in
 * constant memory per key (a bit per expected id, a counter per device):
 *   filter    → the exact set of expected ids: no loss, no duplicate, no extra;
 *   transform → one row per message: per-topic row counts equal what was sent to each topic;
 *   window    → Σ count over all windows equals what was sent, per device and in total.
 * Rows of the warm-up (`warm_` ids or devices) are counted apart. `crossCheck` holds the result
 * against the engine's own counters (rule status with eKuiper's metric keys).
 *
 *   bun bench/verify.ts --workload w1 --tag run --sent 2500,2500,... FILE...
 */
import { parseArgs } from "node:util";
import { deviceOf, passesW1, WORKLOADS, type Workload, type WorkloadId } from "./workloads.ts";

export interface ProofSpec {
  workload: Workload;
  tag: string;
  /** Messages sent per connection (the generator's `sent_per_conn`). */
  sentPerConn: number[];
}

export interface Proof {
  kind: Workload["proof"];
  ok: boolean;
  sent: number;
  /** Rows (filter, transform) or Σ count (window) the proof expects from the measured step. */
  expected: number;
  /** Rows of the measured step found, or Σ count over its windows. */
  got: number;
  lost: number;
  duplicates: number;
  extras: number;
  keys_expected: number;
  keys_seen: number;
  /** Keys whose count differs from what was sent to them (transform, window). */
  keys_wrong: number;
  /** Every line in the output, warm-up included (compare with the sink's records_out_total). */
  rows_total: number;
  warm_rows: number;
  malformed: number;
  notes: string[];
}

/** Expected message count of every device, from the generator's round-robin. */
function perDevice(spec: ProofSpec): Float64Array {
  const D = spec.workload.devices;
  const C = spec.sentPerConn.length;
  const want = new Float64Array(D);
  for (let c = 0; c < C; c++) {
    const n = spec.sentPerConn[c]!;
    for (let k = 0; k < n; k++) want[deviceOf(c, k, C, D)]!++;
  }
  return want;
}

/** Calls `line` for every non-empty line of the files, in order, without holding a file in memory. */
export async function eachLine(files: string[], line: (l: string) => void): Promise<void> {
  const dec = new TextDecoder();
  for (const f of files) {
    let rest = "";
    for await (const chunk of Bun.file(f).stream()) {
      const text = rest + dec.decode(chunk, { stream: true });
      let from = 0;
      for (let i = text.indexOf("\n"); i >= 0; i = text.indexOf("\n", from)) {
        if (i > from) line(text.slice(from, i));
        from = i + 1;
      }
      rest = text.slice(from);
    }
    if (rest) line(rest);
  }
}

/** The string value of `"key":"…"` in a flat JSON line (no escapes in bench ids or devices). */
function field(l: string, key: string): string | undefined {
  const i = l.indexOf(`"${key}":"`);
  if (i < 0) return undefined;
  const from = i + key.length + 4;
  const to = l.indexOf('"', from);
  return to < 0 ? undefined : l.slice(from, to);
}

function numField(l: string, key: string): number {
  const i = l.indexOf(`"${key}":`);
  if (i < 0) return NaN;
  const from = i + key.length + 3;
  let to = from;
  while (to < l.length && l[to] !== "," && l[to] !== "}") to++;
  return Number(l.slice(from, to));
}

/** The device index of `dev_<n>`, -1 for a warm-up device, -2 for anything else. */
function devIndex(d: string | undefined, devices: number): number {
  if (d === undefined) return -2;
  if (d.startsWith("warm_")) return -1;
  if (!d.startsWith("dev_")) return -2;
  const n = Number(d.slice(4));
  return Number.isInteger(n) && n >= 0 && n < devices ? n : -2;
}

export async function verify(files: string[], spec: ProofSpec): Promise<Proof> {
  const w = spec.workload;
  const C = spec.sentPerConn.length;
  const sent = spec.sentPerConn.reduce((a, b) => a + b, 0);
  const p: Proof = {
    kind: w.proof,
    ok: false,
    sent,
    expected: 0,
    got: 0,
    lost: 0,
    duplicates: 0,
    extras: 0,
    keys_expected: 0,
    keys_seen: 0,
    keys_wrong: 0,
    rows_total: 0,
    warm_rows: 0,
    malformed: 0,
    notes: [],
  };
  if (w.proof === "filter") {
    // One bit per message sent; the expected set is every k with temp > 21.0.
    const seen = spec.sentPerConn.map((n) => new Uint8Array((n >> 3) + 1));
    for (let c = 0; c < C; c++) for (let k = 0; k < spec.sentPerConn[c]!; k++) if (passesW1(k)) p.expected++;
    const head = `${spec.tag}_`;
    await eachLine(files, (l) => {
      p.rows_total++;
      const id = field(l, "id");
      if (id === undefined) return void p.malformed++;
      if (id.startsWith("warm_")) return void p.warm_rows++;
      const u = id.lastIndexOf("_");
      const c = Number(id.slice(head.length, u));
      const k = Number(id.slice(u + 1));
      if (!id.startsWith(head) || !Number.isInteger(c) || c < 0 || c >= C || !Number.isInteger(k) || k < 0 || k >= spec.sentPerConn[c]! || !passesW1(k)) {
        return void p.extras++;
      }
      const bits = seen[c]!;
      if (bits[k >> 3]! & (1 << (k & 7))) return void p.duplicates++;
      bits[k >> 3]! |= 1 << (k & 7);
      p.got++;
    });
    p.lost = p.expected - p.got;
    p.keys_expected = p.keys_seen = C;
    p.ok = p.lost === 0 && p.duplicates === 0 && p.extras === 0 && p.malformed === 0;
    return p;
  }
  const want = perDevice(spec);
  const got = new Float64Array(w.devices);
  p.expected = sent;
  // Devices the step sent to (all of them, unless a step is shorter than one message per device: W2-1M).
  p.keys_expected = want.reduce((n, x) => n + (x > 0 ? 1 : 0), 0);
  if (w.proof === "transform") {
    // Rows carry the topic; the state must be one of the temperatures sent (base64 of the text).
    const states = new Set(Array.from({ length: 150 }, (_, i) => Buffer.from(String(20.0 + i / 10)).toString("base64")));
    let badState = 0;
    await eachLine(files, (l) => {
      p.rows_total++;
      const topic = field(l, "topic");
      const d = topic === undefined ? -2 : devIndex(topic.split("/")[2], w.devices);
      if (d === -1) return void p.warm_rows++;
      if (d === -2 || topic !== w.topic(`dev_${d}`)) return void p.extras++;
      if (!states.has(field(l, "state") ?? "")) badState++;
      got[d]!++;
      p.got++;
    });
    if (badState) p.notes.push(`${badState} rows with a state that was never sent`);
    p.malformed += badState;
  } else {
    await eachLine(files, (l) => {
      p.rows_total++;
      const d = devIndex(field(l, "device"), w.devices);
      const n = numField(l, "n");
      if (d === -1) return void p.warm_rows++;
      if (d === -2 || !Number.isInteger(n) || n <= 0) return void p.malformed++;
      got[d]! += n;
      p.got += n;
    });
  }
  for (let d = 0; d < w.devices; d++) {
    if (got[d]! > 0) p.keys_seen++;
    if (got[d] !== want[d]) {
      p.keys_wrong++;
      if (got[d]! < want[d]!) p.lost += want[d]! - got[d]!;
      else p.duplicates += got[d]! - want[d]!;
    }
  }
  p.ok = p.got === sent && p.keys_wrong === 0 && p.keys_seen === p.keys_expected && p.extras === 0 && p.malformed === 0;
  return p;
}

export interface Counters {
  /** The rule's source records_in_total. */
  source_in: number;
  /** The sink's records_out_total. */
  sink_out: number;
  /** Σ exceptions_total over every node. */
  exceptions: number;
}

/** Reads eKuiper-style rule status keys (`source_<s>_0_records_in_total`, `sink_<t>_0_0_records_out_total`, …). */
export function countersOf(status: Record<string, unknown>): Counters {
  const c: Counters = { source_in: 0, sink_out: 0, exceptions: 0 };
  for (const [k, v] of Object.entries(status)) {
    if (typeof v !== "number") continue;
    if (/^source_.*_records_in_total$/.test(k)) c.source_in += v;
    else if (/^sink_.*_records_out_total$/.test(k)) c.sink_out += v;
    if (k.endsWith("_exceptions_total")) c.exceptions += v;
  }
  return c;
}

export interface CrossCheck {
  ok: boolean;
  /** Source records over the measured step (after the warm-up): must equal sent. */
  source_in_step: number;
  sink_out: number;
  exceptions: number;
  why: string[];
}

/** The engine's counters must agree with the proof: source in = sent, sink out = rows written, no exceptions. */
export function crossCheck(before: Counters, after: Counters, proof: Proof): CrossCheck {
  const why: string[] = [];
  const inStep = after.source_in - before.source_in;
  if (inStep !== proof.sent) why.push(`source records_in_total grew by ${inStep}, sent ${proof.sent}`);
  if (after.sink_out !== proof.rows_total) why.push(`sink records_out_total ${after.sink_out}, rows in the output ${proof.rows_total}`);
  if (after.exceptions !== 0) why.push(`${after.exceptions} exceptions`);
  return { ok: why.length === 0, source_in_step: inStep, sink_out: after.sink_out, exceptions: after.exceptions, why };
}

if (import.meta.main) {
  const { values: a, positionals } = parseArgs({
    allowPositionals: true,
    options: { workload: { type: "string", default: "w1" }, tag: { type: "string", default: "run" }, sent: { type: "string" } },
  });
  const w = WORKLOADS[a.workload as WorkloadId];
  if (!w || !a.sent || positionals.length === 0) throw new Error("usage: bench/verify.ts --workload wN --tag run --sent N0,N1,… FILE…");
  const proof = await verify(positionals, { workload: w, tag: a.tag!, sentPerConn: a.sent.split(",").map(Number) });
  console.log(JSON.stringify(proof, null, 2));
  process.exitCode = proof.ok ? 0 : 1;
}
