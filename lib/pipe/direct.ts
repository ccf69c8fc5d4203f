/**
 * One-shot pipe mode (pipe-mode.md): a rule over JSON lines, results to a writer. Used by
 * `floe run`, `floe test` and the conformance suite alike, so they share one code path. runPipe
 * parses the rule file; a rule reading only standard input runs here (file or replay runner), one
 * reading a real connector or with actions runs on the streaming runner (live.ts).
 */
import { EngineError, errorText, ParseError, RowError } from "../errors.ts";
import { ByteBudget } from "../core/byte-budget.ts";
import { isObj, type Obj, type Value } from "../value/values.ts";
import { bufferFromBase64 } from "../value/base64.ts";
import type { FuncEnv } from "../functions/registry.ts";
import { createDecoder, type Decoder } from "../formats/decode.ts";
import { decodeEnvelopeJson, decodeTupleJson } from "../formats/json-tuple.ts";
import { pickEnvelopeJson, pickTupleJson } from "../formats/json-pick.ts";
import { StdoutSink } from "../connectors/stdio/stdout.ts";
import { planRule } from "../plan/plan-rule.ts";
import { createFunctionRegistry } from "../functions/index.ts";
import type { RulePlan } from "../plan/specs.ts";
import { isLookupTable, streamDef, type StreamDef } from "../plan/streams.ts";
import type { LookupSource } from "../connectors/lookups.ts";
import type { CreateStatement } from "../sql/ast.ts";
import { parseCreates, parseRuleFile } from "../sql/parse.ts";
import { VirtualClock, WallClock } from "../ops/window/clock.ts";
import { memoryGovernor } from "../runtime/memory.ts";
import { statusObject } from "../core/metrics.ts";
import { Inlet } from "../runtime/inlet.ts";
import { Topology } from "../runtime/topology.ts";
import { failed, fedFromInput, pipeLookupEnv, pipeSchemas, type PipeRequest, type PipeResult } from "./request.ts";
import type { SchemaRegistry } from "../formats/schema-registry.ts";
import { parseRuleOptions, type RuleOptions } from "../plan/rule-options.ts";
import { RateLimitedErrors } from "../runtime/rate-limited-errors.ts";

interface Envelope {
  ts?: number;
  stream?: string;
  data?: Value;
  raw?: string;
  meta?: Value;
}

/** Lines over which member-selective decoding proves itself (json-pick.ts). */
const PICK_PROBE = 64;

/** A rule file with no CREATE STREAM statement (tables aside) reads schemaless streams from the input. */
function streamDefs(creates: CreateStatement[], fromNames: string[]): Map<string, StreamDef> {
  const defs = new Map<string, StreamDef>();
  for (const c of creates) defs.set(c.name, streamDef(c));
  if (!creates.some((c) => c.streamKind === "stream")) {
    for (const n of fromNames) if (!defs.has(n)) defs.set(n, { name: n, kind: "stream", fields: null, options: {}, statement: "" });
  }
  return defs;
}

function failure(req: PipeRequest, e: unknown): PipeResult {
  const pos = e instanceof ParseError ? `line ${e.line}, column ${e.column}: ` : "";
  req.warn(`floe: ${pos}${errorText(e)}\n`);
  return { ...failed(), error: e };
}

/**
 * The streaming runner with its connectors, sinks and the daemon's rule run: loaded only for a rule
 * that needs it, so that a rule over standard input starts without them (start-up time).
 */
const runLive: typeof import("./live.ts").runLive = async (...a) => (await import("./live.ts")).runLive(...a);

export async function runPipe(req: PipeRequest): Promise<PipeResult> {
  let run: PipeRun;
  try {
    const functions = createFunctionRegistry();
    if (req.graph !== undefined) {
      const extra = req.streamsSql ? parseCreates(req.streamsSql, functions) : [];
      return await runLive(req, undefined, streamDefs(extra, []), functions);
    }
    const file = parseRuleFile(req.sql, functions);
    const extra = req.streamsSql ? parseCreates(req.streamsSql, functions) : [];
    const names = [file.select.from.name, ...file.select.joins.map((j) => j.source.name)];
    const defs = streamDefs([...extra, ...file.creates], names);
    const options = parseRuleOptions(req.ruleId ?? "rule", req.options);
    // Connector streams, or a .json rule's actions, run on the streaming runtime.
    // Lookup tables are queried, not read: a stdin rule joining them stays on this runner.
    const live = (n: string) => defs.has(n) && !fedFromInput(defs.get(n)!, req) && !isLookupTable(defs.get(n)!);
    if (names.some(live) || req.actions?.length) return await runLive(req, file.select, defs, functions);
    run = new PipeRun(req, options, defs, (env) => planRule({ id: req.ruleId ?? "rule", select: file.select, options }, defs, { env, functions, zone: req.zone, ignoreCase: req.ignoreCase }).plan);
    await run.openLookups();
  } catch (e) {
    if (e instanceof EngineError || e instanceof RowError) return failure(req, e);
    throw e;
  }
  try {
    for await (const batch of req.input) {
      if (!run.lines(batch)) break;
      const lag = req.drain?.();
      if (lag) await lag;
      const lookups = run.lookupLag();
      if (lookups) await lookups;
    }
  } catch (e) {
    // The input could not be read to its end (or a lookup failed for good): the rule stops by error.
    run.fatal(e);
  }
  return await run.finish();
}

class PipeRun {
  private readonly clock: VirtualClock;
  private readonly plan: RulePlan;
  private readonly sink: StdoutSink;
  private topo: Topology | undefined;
  private lineNo = 0;
  private lastTs = -Infinity;
  private failed = false;
  /** The line being delivered (0 between lines): where a row error happened. */
  private current = 0;
  private readonly errors: RateLimitedErrors;
  private readonly decoders = new Map<string, Decoder>();
  /** `<etc>/schemas/protobuf`, read at the first raw (`--replay` envelope `raw`) payload. */
  private schemas: SchemaRegistry | undefined;
  private readonly earlyErrors: string[] = [];
  private defaultStream: string | undefined;
  /** The time of the current batch (replay: of the current line), for metrics. */
  private readonly stamp = { ms: 0 };
  /** Opened sources of the plan's lookup nodes, in plan order. */
  private readonly lookups: LookupSource[] = [];
  /** The way into the topology of each stream it reads, by stream name (made with the topology). */
  private readonly inlets = new Map<string, Inlet>();

  constructor(
    private readonly req: PipeRequest,
    private readonly options: RuleOptions,
    private readonly defs: Map<string, StreamDef>,
    plan: (env: FuncEnv) => RulePlan,
  ) {
    this.clock = req.replay ? new VirtualClock(0) : new WallClock();
    this.errors = new RateLimitedErrors(req.warn);
    const clock = this.clock;
    let ruleStart = 0;
    const env: FuncEnv = {
      now: () => clock.now(),
      zone: req.zone,
      ruleId: req.ruleId ?? "rule",
      get ruleStart() {
        return ruleStart;
      },
    };
    this.plan = plan(env);
    const stamp = this.stamp;
    this.sink = new StdoutSink(req.emit, req.write, () => stamp.ms);
    this.start = (at: number) => {
      ruleStart = at;
      return this.startAt(at);
    };
  }

  private readonly start: (at: number) => Topology;

  /** Opens the lookup tables the plan queries (sql §12.5); their caches run on the rule's clock. */
  async openLookups(): Promise<void> {
    const tables = this.plan.ops.flatMap((o) => (o.kind === "lookup" ? [o.spec.table] : []));
    if (!tables.length) return;
    // Loaded here, not at the top: the lookup connectors reach the network clients (start-up time).
    const { createLookupEnv, openLookupTable } = await import("../connectors/lookups.ts");
    const env = createLookupEnv(pipeLookupEnv(this.req));
    for (const t of tables) this.lookups.push(await openLookupTable(t, env, () => this.clock.now()));
  }

  /** Waits while an asynchronous lookup holds as many items as it takes (its FIFO is bounded). */
  lookupLag(): Promise<void> | undefined {
    const topo = this.topo;
    if (!topo || !topo.lookupOps().some((op) => op.room() <= 0)) return undefined;
    return topo.settle().then(() => this.sink.flush());
  }

  /** Builds the topology when the first record arrives: the rule starts at that instant. */
  private startAt(at: number): Topology {
    this.clock.advance(at);
    this.stamp.ms = this.clock.now();
    const stamp = this.stamp;
    // Metric timestamps read the batch's time: reading the clock per operator per row costs more than the rule.
    const errors = this.errors;
    const onRowError = (m: string) => errors.row(this.current ? `line ${this.current}` : "", m);
    const windowBudget = new ByteBudget(this.options.windowMaxBytes, this.options.windowMaxRows);
    const env = { now: () => stamp.ms, sendError: this.options.sendError, clock: this.clock, zone: this.req.zone, onRowError, windowBudget };
    const topo = new Topology(this.plan, env, [this.sink]);
    topo.lookupOps().forEach((op, i) => op.attach(this.lookups[i]!));
    const where = () => `line ${this.current}`;
    // A line holding an array is one record of several rows: the source counts it once (perBatch).
    for (const d of this.defs.values()) if (topo.hasSource(d.name)) this.inlets.set(d.name, new Inlet(topo, d.name, d.fields, true, errors, where));
    const stdin = [...this.defs.values()].filter((d) => fedFromInput(d, this.req) && topo.hasSource(d.name));
    this.defaultStream = stdin.length === 1 ? stdin[0]!.name : undefined;
    for (const m of this.earlyErrors) if (this.defaultStream) topo.sourceError(this.defaultStream, m);
    this.topo = topo;
    return topo;
  }

  /** The rule stops by error (an input that cannot be read, a failure that is not a record's). */
  fatal(e: unknown): void {
    this.failed = true;
    this.errors.fatal(errorText(e));
  }

  private decodeError(no: number, message: string): void {
    this.errors.decode(`line ${no}`, message);
    if (!this.topo) this.earlyErrors.push(message);
    else if (this.defaultStream) this.topo.sourceError(this.defaultStream, message);
  }

  /** Column pruning of the stream a record belongs to (undefined: the default stdin stream). */
  private readonly keepFor = (stream: string | undefined): ReadonlySet<string> | null => {
    const name = stream ?? this.defaultStream ?? this.plan.sources[0]?.name;
    // Asked once per line: the answer for the last stream is kept (the default stream changes
    // only when the topology starts).
    if (name === this.keepName && name !== undefined) return this.keepSet;
    const src = this.plan.sources.find((s) => s.name === name);
    this.keepName = name;
    return (this.keepSet = src ? (src.valueColumns !== undefined ? src.valueColumns : src.columns) : null);
  };
  private keepName: string | undefined = undefined;
  private keepSet: ReadonlySet<string> | null = null;

  /**
   * Member-selective decoding (json-pick.ts): only when the rule names its columns (no
   * `*`), matches them case-sensitively (ignoreCase folds names the scan could not know) and no
   * column is `__proto__` (a plain object's setter). Otherwise, and for any line the scan declines,
   * the full decoder.
   */
  private pickOn = true;
  private pickTries = 0;
  private pickMisses = 0;

  /** A declined line costs its scan and the full decode: an input the scan mostly declines stops trying. */
  private picked<T>(v: T | undefined): T | undefined {
    if (++this.pickTries <= PICK_PROBE) {
      if (v === undefined) this.pickMisses++;
      if (this.pickTries === PICK_PROBE && this.pickMisses * 2 > PICK_PROBE) this.pickOn = false;
    }
    return v;
  }

  private tuple(text: string): Value {
    const keep = this.keepFor(undefined);
    const v = this.pickOn && !this.req.ignoreCase && keep !== null && !keep.has("__proto__") ? this.picked(pickTupleJson(text, keep)) : undefined;
    return v ?? decodeTupleJson(text, keep);
  }

  /** The envelope the scan fills for every line (a line's envelope is not kept past its delivery). */
  private readonly picking: Envelope = { ts: undefined, stream: undefined, data: undefined, raw: undefined, meta: undefined };

  private envelope(text: string): Envelope {
    return (this.pickOn && !this.req.ignoreCase ? this.picked(pickEnvelopeJson(text, this.keepFor, this.picking)) : undefined) ?? envelope(text, this.keepFor);
  }

  /** Handles a batch of lines; false once the run has failed. */
  lines(batch: string[]): boolean {
    if (!this.req.replay) this.stamp.ms = this.clock.now();
    try {
      for (const text of batch) {
        const no = ++this.lineNo;
        if (!text.trim()) continue;
        let env: Envelope;
        try {
          env = this.req.replay ? this.envelope(text) : { data: this.tuple(text) };
        } catch (e) {
          this.decodeError(no, errorText(e));
          continue;
        }
        this.current = no;
        if (!this.deliver(no, env)) {
          this.failed = true;
          return false;
        }
      }
    } catch (e) {
      // Record errors are caught at the operators; anything reaching here stops the rule.
      this.fatal(e);
      return false;
    } finally {
      this.current = 0;
    }
    this.sink.flush();
    memoryGovernor.check();
    return true;
  }

  private deliver(no: number, e: Envelope): boolean {
    const replay = this.req.replay;
    if (replay && e.ts !== undefined) {
      if (e.ts < this.lastTs) {
        const m = `line ${no}: ts ${e.ts} goes backwards (previous line had ${this.lastTs})`;
        this.errors.fatalMessage = m;
        this.req.warn(`floe: ${m}\n`);
        return false;
      }
      this.lastTs = e.ts;
    }
    if (this.topo === undefined) this.start(replay ? (e.ts ?? 0) : Date.now());
    if (replay && e.ts !== undefined) {
      this.stamp.ms = e.ts;
      this.clock.advance(e.ts);
    }
    if (e.data === undefined && e.raw === undefined) return true;
    const stream = e.stream ?? this.defaultStream;
    const def = stream !== undefined ? this.defs.get(stream) : undefined;
    const inlet = def !== undefined ? this.inlets.get(def.name) : undefined;
    if (!def || !inlet) {
      this.decodeError(no, stream === undefined ? "the line names no stream and the rule reads several" : `unknown stream ${stream}`);
      return true;
    }
    const now = replay ? this.clock.now() : this.stamp.ms;
    const meta = e.meta !== undefined && isObj(e.meta) ? e.meta : null;
    if (e.raw !== undefined) {
      // Raw payload bytes go through the stream's FORMAT decoder, as an MQTT payload would.
      let dec: Decoder;
      let payload: Uint8Array;
      try {
        dec = this.decoder(def);
        payload = bufferFromBase64(e.raw);
      } catch (err) {
        if (!(err instanceof RowError || err instanceof EngineError)) throw err;
        inlet.reject(err.message);
        return true;
      }
      const rows = inlet.decode(dec, payload);
      if (rows !== undefined) inlet.ingest(rows, meta, now, true);
      return true;
    }
    let rows: Obj | Obj[];
    try {
      rows = rowsOf(e.data!);
    } catch (err) {
      if (!(err instanceof RowError)) throw err;
      inlet.reject(err.message);
      return true;
    }
    // An array is one record carrying several rows (pipe-mode.md §Input): the source counts it once.
    inlet.ingest(rows, meta, now, false);
    return true;
  }

  /** The FORMAT decoder of stream `def`, made at its first raw payload. */
  private decoder(def: StreamDef): Decoder {
    let dec = this.decoders.get(def.name);
    if (!dec) this.decoders.set(def.name, (dec = createDecoder(def, { schemas: (this.schemas ??= pipeSchemas(this.req.etcDir)) })));
    return dec;
  }

  async finish(): Promise<PipeResult> {
    const clock = this.clock;
    // A rule whose input was empty still starts (and stops) once.
    const topo = this.topo ?? this.start(this.req.replay ? 0 : Date.now());
    try {
      if (!this.failed && this.req.onEof === "flush") {
        const until = topo.windowOps().map((w) => w.flushTime()).filter((t): t is number => t !== undefined);
        if (until.length) clock.advance(Math.max(...until));
      }
      await topo.settle();
      topo.end();
    } catch (e) {
      this.fatal(e);
    }
    for (const op of topo.lookupOps()) await op.detach();
    if (clock instanceof WallClock) clock.stop();
    this.errors.end();
    const status = statusObject(
      {
        status: this.failed ? "stopped by error" : "stopped",
        message: this.failed ? (this.errors.fatalMessage ?? "") : "done",
        lastStartTimestamp: topo.startedAt,
        lastStopTimestamp: clock.now(),
        nextStartTimestamp: 0,
      },
      topo.nodes(),
    );
    const e = this.errors;
    return { exitCode: this.failed ? 1 : 0, lost: e.decodeErrors + this.sink.lost() + topo.dropped(), decodeErrors: e.decodeErrors, rowErrors: e.rowErrors, status };
  }
}

/** A replay line (pipe-mode.md §Input): `{"stream", "ts", "data" | "raw", "meta"}`. */
function envelope(text: string, keepFor: (stream: string | undefined) => ReadonlySet<string> | null): Envelope {
  const v = decodeEnvelopeJson(text, keepFor);
  if (!isObj(v)) throw new RowError("a replay line must be a JSON object");
  const ts = v.ts;
  return {
    ts: typeof ts === "bigint" || typeof ts === "number" ? Number(ts) : undefined,
    stream: typeof v.stream === "string" ? v.stream : undefined,
    data: v.data,
    raw: typeof v.raw === "string" ? v.raw : undefined,
    meta: v.meta,
  };
}

/** A `data` record's rows: one object (the common case, no array on the hot path) or several. */
function rowsOf(data: Value): Obj | Obj[] {
  if (!Array.isArray(data)) return rowOf(data);
  const out = new Array<Obj>(data.length);
  for (let i = 0; i < data.length; i++) out[i] = rowOf(data[i]!);
  return out;
}

function rowOf(r: Value): Obj {
  if (!isObj(r)) throw new RowError("only map[string]interface{} and []map[string]interface{} is supported");
  return r;
}
