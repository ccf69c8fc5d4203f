/**
 * One-shot pipe mode (pipe-mode.md): a rule over JSON lines, results to a writer. Used by
 * `floe run`, `floe test` and the conformance suite alike, so they share one code path.
 */
import { EngineError, errorText, ParseError, RowError } from "../errors.ts";
import { Tuple } from "../expr/row.ts";
import type { Zone } from "../expr/time.ts";
import { isObj, type Obj, type Value } from "../expr/values.ts";
import type { FuncEnv } from "../functions/registry.ts";
import { createDecoder, type Decoder } from "../io/formats/decode.ts";
import { decodeTupleJson } from "../io/formats/json-tuple.ts";
import { StdoutSink, type EmitMode } from "../io/sinks/stdout.ts";
import { planRule } from "../plan/plan.ts";
import { streamDef, type StreamDef } from "../plan/streams.ts";
import { parseRuleFile } from "../sql/parse.ts";
import type { CreateStatement } from "../sql/ast.ts";
import { RealClock, VirtualClock, type Clock } from "../window/clock.ts";
import { WindowOp } from "../window/index.ts";
import { statusObject } from "./metrics.ts";
import { coerceToSchema } from "./schema-coerce.ts";
import { Topology, type RuleEnv } from "./topology.ts";

export interface PipeRequest {
  /** Rule file text: CREATE statements then one SELECT. */
  readonly sql: string;
  /** Extra CREATE statements (`--streams`). */
  readonly streamsSql?: string;
  readonly ruleId?: string;
  /** Rule options (`-o KEY=VALUE`). */
  readonly options: Readonly<Record<string, unknown>>;
  readonly lines: AsyncIterable<string>;
  readonly replay: boolean;
  readonly emit: EmitMode;
  readonly onEof: "flush" | "drop";
  readonly zone: Zone;
  /** Standard output. */
  write(text: string): void;
  /** Diagnostics (standard error). */
  warn(text: string): void;
}

export interface PipeResult {
  /** 0 done, 1 the rule failed. (3 is decided by the caller from `lost` with --strict.) */
  readonly exitCode: 0 | 1;
  /** Records lost or rejected: decode errors, late rows, sink failures. */
  readonly lost: number;
  readonly status: Record<string, number | string> | null;
}

/** Schemaless stdin streams are implied for a rule file with no CREATE statement. */
function streamDefs(creates: CreateStatement[], fromNames: string[]): Map<string, StreamDef> {
  const defs = new Map<string, StreamDef>();
  for (const c of creates) defs.set(c.name, streamDef(c));
  if (creates.length === 0) {
    for (const n of fromNames) defs.set(n, { name: n, kind: "stream", fields: null, options: {}, statement: "" });
  }
  return defs;
}

function isStdin(def: StreamDef): boolean {
  const t = (def.options.TYPE ?? "").toLowerCase();
  return t === "" || t === "stdin" || (def.kind === "table" && t === "file" && !def.options.DATASOURCE);
}

export async function runPipe(req: PipeRequest): Promise<PipeResult> {
  const fail = (e: unknown): PipeResult => {
    const pos = e instanceof ParseError ? `line ${e.line}, column ${e.column}: ` : "";
    req.warn(`floe: ${pos}${errorText(e)}\n`);
    return { exitCode: 1, lost: 0, status: null };
  };
  let rule;
  try {
    const file = parseRuleFile(req.sql);
    const extra = req.streamsSql ? parseRuleFile(req.streamsSql + "\nSELECT * FROM x").creates : [];
    const creates = [...extra, ...file.creates];
    const names = [file.select.from.name, ...file.select.joins.map((j) => j.source.name)];
    rule = { select: file.select, defs: streamDefs(creates, names) };
  } catch (e) {
    if (e instanceof EngineError) return fail(e);
    throw e;
  }

  const iterator = req.lines[Symbol.asyncIterator]();
  let lineNo = 0;
  const read = (): Promise<Next> => (req.replay ? nextEnvelope : nextTuple)(iterator, () => ++lineNo);
  // The virtual clock starts at the first envelope's time, so read ahead to it.
  const early: Next[] = [];
  if (req.replay) {
    for (;;) {
      const n = await read();
      early.push(n);
      if (!n || !("error" in n)) break;
    }
  }
  const first = early.find((n) => n !== undefined && "env" in n);
  const firstTs = first && "env" in first ? first.env.ts : undefined;
  const lost = { decode: 0 };
  const clock: Clock = req.replay ? new VirtualClock(firstTs ?? 0) : new RealClock();
  const env: FuncEnv = { now: () => clock.now(), zone: req.zone, ruleId: req.ruleId ?? "rule", ruleStart: clock.now() };
  const o = req.options;

  let topo: Topology;
  let sink: StdoutSink;
  try {
    const { plan } = planRule(rule.select, rule.defs, {
      env,
      zone: req.zone,
      sendMetaToSink: o.sendMetaToSink === true,
      sendNil: o.sendNilField === true || o.sendNil === true,
      isEventTime: o.isEventTime === true,
    });
    const renv: RuleEnv = { now: () => clock.now(), sendError: o.sendError === true, clock, zone: req.zone };
    sink = new StdoutSink(req.emit, req.write, () => clock.now());
    topo = new Topology(plan, renv, [sink]);
  } catch (e) {
    if (e instanceof EngineError || e instanceof RowError) return fail(e);
    throw e;
  }

  const stdinStreams = [...rule.defs.values()].filter((d) => isStdin(d) && topo.hasSource(d.name));
  const defaultStream = stdinStreams.length === 1 ? stdinStreams[0]!.name : undefined;
  const decoders = new Map<string, Decoder>();
  let lastTs = -Infinity;

  const deliver = (no: number, e: Envelope): boolean => {
    if (e.ts !== undefined) {
      if (e.ts < lastTs) {
        req.warn(`floe: line ${no}: ts ${e.ts} goes backwards (previous ${lastTs})\n`);
        return false;
      }
      lastTs = e.ts;
      (clock as VirtualClock).advance(e.ts);
    }
    if (e.data === undefined && e.raw === undefined) return true;
    const stream = e.stream ?? defaultStream;
    const def = stream !== undefined ? rule.defs.get(stream) : undefined;
    if (!def || !topo.hasSource(def.name)) {
      lost.decode++;
      req.warn(`floe: line ${no}: ${stream === undefined ? "no stream named and the rule reads several" : `unknown stream ${stream}`}\n`);
      return true;
    }
    let rows: Obj[];
    try {
      if (e.raw !== undefined) {
        let dec = decoders.get(def.name);
        if (!dec) decoders.set(def.name, (dec = createDecoder(def)));
        rows = dec(Buffer.from(e.raw, "base64"));
      } else {
        const list = Array.isArray(e.data) ? e.data : [e.data];
        rows = list.map((r) => {
          if (!isObj(r!)) throw new RowError(`only map[string]interface{} and []map[string]interface{} is supported`);
          return def.fields ? coerceToSchema(r, def.fields) : r;
        });
      }
    } catch (err) {
      if (!(err instanceof RowError || err instanceof EngineError)) throw err;
      lost.decode++;
      topo.sourceError(def.name, err.message);
      req.warn(`floe: line ${no}: ${err.message}\n`);
      return true;
    }
    const now = clock.now();
    const meta = isObj(e.meta ?? null) ? (e.meta as Obj) : null;
    for (const r of rows) topo.ingest(def.name, new Tuple(r, meta, now, def.name), 1);
    return true;
  };

  const decodeError = (no: number, message: string) => {
    lost.decode++;
    if (defaultStream !== undefined) topo.sourceError(defaultStream, message);
    req.warn(`floe: line ${no}: ${message}\n`);
  };
  let failed = false;
  for (;;) {
    const next = early.length ? early.shift() : await read();
    if (!next) break;
    if ("error" in next) decodeError(next.no, next.error);
    else if (!deliver(next.no, next.env)) {
      failed = true;
      break;
    }
  }

  if (!failed && req.onEof === "flush" && clock instanceof VirtualClock) {
    const until = topo.windowOps().map((w: WindowOp) => w.flushTime()).filter((t): t is number => t !== undefined);
    if (until.length) clock.advance(Math.max(...until));
  }
  topo.end();
  const status = statusObject(
    { status: failed ? "stopped by error" : "stopped", message: failed ? "" : "done", lastStartTimestamp: env.ruleStart, lastStopTimestamp: clock.now(), nextStartTimestamp: 0 },
    topo.nodes(),
  );
  return { exitCode: failed ? 1 : 0, lost: lost.decode + sink.lost() + topo.dropped(), status };
}

interface Envelope {
  ts?: number;
  stream?: string;
  data?: Value;
  raw?: string;
  meta?: Value;
}

type Next = { no: number; env: Envelope } | { no: number; error: string } | undefined;

async function nextLine(it: AsyncIterator<string>, count: () => number): Promise<{ no: number; text: string } | undefined> {
  for (;;) {
    const r = await it.next();
    if (r.done) return undefined;
    const no = count();
    if (r.value.trim()) return { no, text: r.value };
  }
}

/** Reads one replay envelope (pipe-mode.md §Input). */
async function nextEnvelope(it: AsyncIterator<string>, count: () => number): Promise<Next> {
  const line = await nextLine(it, count);
  if (!line) return undefined;
  try {
    const v = decodeTupleJson(line.text);
    if (!isObj(v)) return { no: line.no, error: "a replay line must be a JSON object" };
    const ts = v.ts;
    const env: Envelope = {
      ts: typeof ts === "bigint" || typeof ts === "number" ? Number(ts) : undefined,
      stream: typeof v.stream === "string" ? v.stream : undefined,
      data: v.data === undefined ? undefined : v.data,
      raw: typeof v.raw === "string" ? v.raw : undefined,
      meta: v.meta,
    };
    return { no: line.no, env };
  } catch (e) {
    return { no: line.no, error: errorText(e) };
  }
}

/** Reads one plain record line (no --replay). */
async function nextTuple(it: AsyncIterator<string>, count: () => number): Promise<Next> {
  const line = await nextLine(it, count);
  if (!line) return undefined;
  try {
    return { no: line.no, env: { data: decodeTupleJson(line.text) } };
  } catch (e) {
    return { no: line.no, error: errorText(e) };
  }
}
