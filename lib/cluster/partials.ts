/**
 * The partial aggregates of a two-stage rule (docs/group.md, "Two-stage aggregation") between
 * the members: each partition's run publishes, at each window close, its partial rows of that
 * window into the group's JetStream stream `floe_<group>_partials` (subject
 * `floe.<group>.partial.<rule>.<plan>`, message id `<partition>.<window end>`, so a re-sent
 * partial is dropped by the server's duplicate window), signed with the group secret. The merge
 * reads them back in order from the start (so a new merge owner rebuilds what the last one held)
 * through a `PartialGate`. Once the results of the windows it handed on have been sent, the merge
 * stores a release mark (the last such window's end, signed, subject `….released`): a merge
 * starting later hands on only the windows after it.
 */
import { createHash } from "node:crypto";
import { AckPolicy, DeliverPolicy, jetstream, jetstreamManager } from "@nats-io/jetstream";
import type { Obj, Value } from "../value/values.ts";
import type { EntrySigner } from "./auth.ts";
import { keyToken, type NatsConnection } from "./nats.ts";

/** Partials kept this long: a merge owner taking over re-reads them from the start. */
const KEEP_MS = 24 * 3600_000;
/** A partial re-sent within this span (a new owner recomputing from a checkpoint) is dropped by the server. */
const DUPLICATES_MS = 10 * 60_000;

/** One window of merged partials: every partition's rows, in partition order. */
export interface PartialWindow {
  readonly end: number;
  readonly rows: Obj[];
}

/**
 * Completeness of the merge: a window is released once every partition has closed it. A
 * partition's windows close in order, so its partial of the window ending at `e` also says it
 * has closed every window ending at or before `e` — a window in which it had no rows included.
 * A partial of a window already released, or repeated (a replay, a new owner's recomputation),
 * changes nothing: the last one of a (partition, window) stands until the window is released.
 */
export class PartialGate {
  private readonly closed: number[];
  private readonly pending = new Map<number, Map<number, Obj[]>>();
  private releasedThrough = -Infinity;

  constructor(readonly partitions: number) {
    this.closed = Array.from({ length: partitions }, () => -Infinity);
  }

  /** Partition `p`'s partial rows of the window ending at `end`; returns the windows now complete, in end order. */
  add(p: number, end: number, rows: Obj[]): PartialWindow[] {
    if (!Number.isInteger(p) || p < 0 || p >= this.partitions || end <= this.releasedThrough) return [];
    let w = this.pending.get(end);
    if (!w) this.pending.set(end, (w = new Map()));
    w.set(p, rows);
    if (end > this.closed[p]!) this.closed[p] = end;
    let through = Infinity;
    for (const c of this.closed) if (c < through) through = c;
    if (through === -Infinity) return [];
    const out: PartialWindow[] = [];
    for (const e of [...this.pending.keys()].filter((e) => e <= through).sort((a, b) => a - b)) {
      const parts = this.pending.get(e)!;
      this.pending.delete(e);
      const all: Obj[] = [];
      for (let q = 0; q < this.partitions; q++) for (const r of parts.get(q) ?? []) all.push(r);
      out.push({ end: e, rows: all });
      this.releasedThrough = e;
    }
    return out;
  }

  /** Windows waiting for a partition. */
  waiting(): number {
    return this.pending.size;
  }
}

/** The stream holding the group's partials. */
export function partialsStream(group: string): string {
  return `floe_${group}_partials`;
}

/** The subject of rule `rule`'s partials under plan text `plan` (a changed rule starts afresh). */
export function partialsSubject(group: string, rule: string, plan: string): string {
  return `floe.${group}.partial.${keyToken(rule)}.${createHash("sha256").update(plan).digest("hex").slice(0, 16)}`;
}

/** The subject of the merge's release marks beside partials subject `subject`. */
function marksSubject(subject: string): string {
  return `${subject}.released`;
}

/** Stores the release mark of the window ending at `end` (epoch `epoch`). */
export async function publishReleased(nc: NatsConnection, signer: EntrySigner, subject: string, epoch: number, end: number): Promise<void> {
  const content = JSON.stringify({ e: epoch, end });
  await jetstream(nc).publish(marksSubject(subject), JSON.stringify({ c: content, h: signer.sign(marksSubject(subject), content) }), { timeout: 10_000 });
}

/** The end of the last window a merge of `subject` released (−Infinity when none, or when the last mark is not signed by the group). */
export async function lastReleased(nc: NatsConnection, signer: EntrySigner, group: string, subject: string): Promise<number> {
  const jsm = await jetstreamManager(nc);
  let data: string;
  try {
    const m = await jsm.streams.getMessage(partialsStream(group), { last_by_subj: marksSubject(subject) });
    if (!m) return -Infinity;
    data = m.string();
  } catch {
    return -Infinity;
  }
  try {
    const env = JSON.parse(data) as { c?: unknown; h?: unknown };
    if (typeof env.c !== "string" || !signer.verify(marksSubject(subject), env.c, env.h)) return -Infinity;
    const end = (JSON.parse(env.c) as { end?: unknown }).end;
    return typeof end === "number" ? end : -Infinity;
  } catch {
    return -Infinity;
  }
}

/** Creates the partials stream when absent. */
export async function ensurePartialsStream(nc: NatsConnection, group: string): Promise<void> {
  const jsm = await jetstreamManager(nc);
  const name = partialsStream(group);
  try {
    await jsm.streams.info(name);
  } catch {
    await jsm.streams.add({ name, subjects: [`floe.${group}.partial.>`], max_age: KEEP_MS * 1_000_000, duplicate_window: DUPLICATES_MS * 1_000_000 });
  }
}

/** Deletes rule `rule`'s partials and release marks, of every version of its SQL (the rule was deleted); nothing when the group never ran a two-stage rule. */
export async function purgePartials(nc: NatsConnection, group: string, rule: string): Promise<void> {
  const jsm = await jetstreamManager(nc);
  try {
    await jsm.streams.info(partialsStream(group));
  } catch {
    return;
  }
  await jsm.streams.purge(partialsStream(group), { filter: `floe.${group}.partial.${keyToken(rule)}.>` });
}

// Values keep their int/float kind across members (JSON alone would turn 2.0 into 2).
type Enc = [string, unknown];
function enc(v: Value): Enc {
  if (v === null) return ["n", null];
  switch (typeof v) {
    case "bigint":
      return ["i", v.toString()];
    case "number":
      return ["f", String(v)];
    case "string":
      return ["s", v];
    case "boolean":
      return ["b", v];
  }
  if (Array.isArray(v)) return ["a", v.map(enc)];
  if (v instanceof Uint8Array) return ["y", Buffer.from(v).toString("base64")];
  if (Object.getPrototypeOf(v) === Object.prototype) return ["o", Object.entries(v as Obj).map(([k, x]) => [k, enc(x)])];
  return ["s", String(v)];
}
function dec(e: Enc): Value {
  const [t, x] = e;
  switch (t) {
    case "i":
      return BigInt(x as string);
    case "f":
      return Number(x as string);
    case "s":
    case "b":
      return x as string | boolean;
    case "a":
      return (x as Enc[]).map(dec);
    case "y":
      return new Uint8Array(Buffer.from(x as string, "base64"));
    case "o": {
      const o: Obj = {};
      for (const [k, v] of x as [string, Enc][]) o[k] = dec(v);
      return o;
    }
    default:
      return null;
  }
}

const signKey = (subject: string, id: string) => `${subject}/${id}`;

/** Publishes partition `p`'s partial rows of the window ending at `end` (epoch `epoch`), signed. */
export async function publishPartial(nc: NatsConnection, signer: EntrySigner, subject: string, p: number, epoch: number, end: number, rows: readonly Obj[]): Promise<void> {
  const id = `${p}.${end}`;
  const content = JSON.stringify({ p, e: epoch, end, rows: rows.map((r) => enc(r)) });
  await jetstream(nc).publish(subject, JSON.stringify({ c: content, h: signer.sign(signKey(subject, id), content) }), { msgID: id, timeout: 10_000 });
}

export interface Partial {
  readonly p: number;
  readonly epoch: number;
  readonly end: number;
  readonly rows: Obj[];
}

/** Decodes and verifies one partial message; a string says why it is refused. */
export function decodePartial(signer: EntrySigner, subject: string, data: string): Partial | string {
  let env: { c?: unknown; h?: unknown };
  try {
    env = JSON.parse(data) as { c?: unknown; h?: unknown };
  } catch {
    return "not JSON";
  }
  if (typeof env.c !== "string") return "no content";
  let c: { p?: unknown; e?: unknown; end?: unknown; rows?: unknown };
  try {
    c = JSON.parse(env.c) as typeof c;
  } catch {
    return "content not JSON";
  }
  if (typeof c.p !== "number" || typeof c.end !== "number" || typeof c.e !== "number" || !Array.isArray(c.rows)) return "malformed partial";
  if (!signer.verify(signKey(subject, `${c.p}.${c.end}`), env.c, env.h)) return "no valid signature of the group secret";
  return { p: c.p, epoch: c.e, end: c.end, rows: (c.rows as Enc[]).map((r) => dec(r) as Obj) };
}

/**
 * Reads the partials of `subject` in stream order from the start, calling `fn` with each
 * message's text; returns the stop.
 */
export async function readPartials(nc: NatsConnection, group: string, subject: string, fn: (data: string) => void): Promise<() => Promise<void>> {
  const js = jetstream(nc);
  const jsm = await jetstreamManager(nc);
  const stream = partialsStream(group);
  // An ephemeral consumer (nats-server 2.9 has no ordered consumers with a filter), gone a minute after its reader.
  const info = await jsm.consumers.add(stream, { filter_subject: subject, ack_policy: AckPolicy.None, deliver_policy: DeliverPolicy.All, inactive_threshold: 60_000_000_000 });
  const consumer = await js.consumers.get(stream, info.name);
  const messages = await consumer.consume();
  void (async () => {
    for await (const m of messages) fn(m.string());
  })().catch(() => {});
  return async () => {
    await messages.close().catch(() => {});
    await jsm.consumers.delete(stream, info.name).catch(() => {});
  };
}
