/**
 * The encoding stages of a sink pipeline (rules-and-sinks.md §3.1 steps 3–6): `batchWriter` or
 * `encode`, then `compress` and `encrypt` — the transform's outputs become the connector's
 * payload. Tuple sinks (memory, redis) get rows instead of bytes. Each stage is a status node; a
 * sampled item (`timed`) records its process_latency_us.
 */
import { EngineError, ErrCode, RowError } from "../errors.ts";
import { isObj, type Obj, type Value } from "../value/values.ts";
import { parseGoJson } from "../value/go-json.ts";
import type { NodeMetrics } from "../core/metrics.ts";
import { createEncoder, delimitedEncoder, withHeaderRecord, type DelimitedEncoder, type Encoder } from "../formats/encode.ts";
import { checkFormat, type SchemaRegistry } from "../formats/schema-registry.ts";
import { encodeGoJson } from "../value/json-encode.ts";
import { bytesOf, compressor, encryptor, type Transform } from "./codec.ts";
import type { SinkCommon } from "./common.ts";
import { SinkItem, type SinkSource } from "./connector.ts";
import { DelimitedSlices } from "./delimited-slices.ts";
import { JsonSlices, type PayloadSlices } from "./json-slices.ts";
import { Output } from "./transform.ts";

export type Payload = SinkItem["payload"];

/** µs since `t0` (a performance.now() reading). */
export function elapsedUs(t0: number): number {
  return Math.round((performance.now() - t0) * 1000);
}

function countThrough(m: NodeMetrics, now: number): void {
  m.recordsIn++;
  m.recordsOut++;
  m.lastInvocation = now;
}

/** Tuple sinks take rows: a template's text is decoded back (object → row, array → rows). */
export function tupleData(o: Output): Obj | Obj[] {
  let d: Value = o.data;
  if (o.text !== null) d = parseGoJson(o.text);
  if (isObj(d)) return d;
  if (Array.isArray(d)) return d.filter(isObj);
  throw new RowError(`unsupported type ${String(d)}, must be a map or a list of maps`);
}

/** Sets `field: true` on a row, or on every row of a list (copies; other values unchanged). */
function markRows(v: Value, field: string): Value {
  if (isObj(v)) return { ...v, [field]: true };
  if (Array.isArray(v)) return v.map((r) => (isObj(r) ? { ...r, [field]: true } : r));
  return v;
}

/**
 * A bytes sink's `format` at rule creation: a protobuf `schemaId` must resolve, and protobuf
 * messages cannot be batched (the batch writer joins text payloads). Throws EngineError.
 */
export function checkSinkFormat(c: SinkCommon, schemas: SchemaRegistry): void {
  checkFormat(schemas, c.format, c.schemaId);
  if (c.format === "protobuf" && (c.batchSize > 0 || c.lingerInterval > 0))
    throw new EngineError("format protobuf cannot be batched: a payload is one message (remove batchSize and lingerInterval)", ErrCode.converter);
}

export class PayloadEncoder {
  readonly writerNode: NodeMetrics | null;
  readonly encodeNode: NodeMetrics | null;
  readonly compressNode: NodeMetrics | null;
  readonly encryptNode: NodeMetrics | null;
  private readonly encoder: Encoder | null;
  /** A csv file with `hasHeader`: its single rows carry the header record (the file sink's header). */
  private readonly headed: DelimitedEncoder | null;
  private readonly compress: Transform | null;
  private readonly encrypt: Transform | null;

  /** `op(helper)` makes the next helper node (its index counts on from the pipeline's). */
  constructor(
    private readonly c: SinkCommon,
    private readonly bytes: boolean,
    type: string,
    batching: boolean,
    aesKey: string | undefined,
    op: (helper: string) => NodeMetrics,
    schemas?: SchemaRegistry,
  ) {
    this.writerNode = batching ? op("batchWriter") : null;
    this.encodeNode = bytes && !batching ? op("encode") : null;
    // The file sink compresses and encrypts its file stream itself.
    this.compress = bytes && type !== "file" ? compressor(c.compression) : null;
    this.compressNode = this.compress ? op("compress") : null;
    this.encrypt = bytes && type !== "file" ? encryptor(c.encryption, aesKey, c.encProps) : null;
    this.encryptNode = this.encrypt ? op("encrypt") : null;
    this.headed = bytes && type === "file" && c.format === "delimited" && c.hasHeader ? delimitedEncoder(c) : null;
    this.encoder = this.headed ?? (bytes ? createEncoder(c.format, c, schemas) : null);
  }

  /** The encoding `single` made last, before compression and encryption (what sinks alike share, shared-encoding.ts). */
  lastEncoded: string | Uint8Array = "";

  /** The encode node's payload for one output of a bytes sink, or undefined (counted) when it fails. */
  single(o: Output, now: number, timed: boolean): Payload | undefined {
    const e = this.encodeNode!;
    e.recordsIn++;
    e.lastInvocation = now;
    const t0 = timed ? performance.now() : 0;
    let p: string | Uint8Array;
    try {
      if (o.text !== null) p = o.text;
      else {
        p = this.encoder!(o.data);
        const cols = this.headed && isObj(o.data) ? this.headed.columns() : undefined;
        if (cols) p = withHeaderRecord(cols.join(this.c.delimiter), p as string);
      }
    } catch (x) {
      if (!(x instanceof RowError)) throw x;
      e.exception(x.message, now);
      return undefined;
    }
    e.recordsOut++;
    if (timed) e.processLatencyUs = elapsedUs(t0);
    this.lastEncoded = p;
    return this.post(p, now, true, timed);
  }

  /** `single` of an output another sink alike encoded as `p` (shared-encoding.ts): counted as encoded here. */
  encoded(p: string | Uint8Array, now: number): Payload {
    const e = this.encodeNode!;
    e.recordsIn++;
    e.recordsOut++;
    e.lastInvocation = now;
    return this.compress === null && this.encrypt === null ? p : this.post(p, now, true, false);
  }

  /** Whether a whole-array output's payload can be built in slices: a bytes sink with json or delimited format. */
  get sliceable(): boolean {
    return this.bytes && (this.c.format === "json" || this.c.format === "delimited");
  }

  /** Whether a batch's payload can be built in slices (JsonSlices): json format. */
  get sliceableBatch(): boolean {
    return this.bytes && this.c.format === "json";
  }

  /** `single` for a whole-array output whose payload is built in slices: counts it in, returns the builder. */
  beginSingle(o: Output, now: number): PayloadSlices {
    const e = this.encodeNode!;
    e.recordsIn++;
    e.lastInvocation = now;
    const c = this.c;
    return c.format === "json" ? new JsonSlices([o], false) : new DelimitedSlices(o.data as Value[], c.delimiter, c.hasHeader);
  }

  /** The end of `beginSingle`: the payload, counted out (always timed: there is one per window). */
  endSingle(s: PayloadSlices, now: number): Payload {
    const e = this.encodeNode!;
    e.recordsOut++;
    e.processLatencyUs = Math.round(s.spentMs * 1000);
    return this.post(s.text(), now, true, true);
  }

  /** The batch writer's payload built by a JsonSlices over the batch (wrapped). */
  endBatch(s: PayloadSlices, now: number): Payload {
    return this.post(s.text(), now, true, true);
  }

  /** A sliced single payload failed (RowError): counted on the encode node, the output dropped. */
  failSingle(message: string, now: number): void {
    this.encodeNode!.exception(message, now);
  }

  /** The batch writer's payload for a batch of outputs (throws RowError). */
  batch(list: readonly Output[], now: number, count = true): Payload {
    if (!this.bytes) {
      const merged: Obj[] = [];
      for (const o of list) {
        const d = tupleData(o);
        if (Array.isArray(d)) for (const r of d) merged.push(r);
        else merged.push(d);
      }
      return merged;
    }
    if (this.c.format === "json") {
      let s = "[";
      for (let i = 0; i < list.length; i++) s += (i ? "," : "") + (list[i]!.text ?? encodeGoJson(list[i]!.data));
      return this.post(s + "]", now, count, count);
    }
    const parts = list.map((o) => {
      const p = o.text ?? this.encoder!(o.data);
      return typeof p === "string" ? p : new TextDecoder().decode(p);
    });
    return this.post(parts.join("\n"), now, count, count);
  }

  /** Compression and encryption; `count` updates their nodes, `timed` their latency. */
  private post(p: string | Uint8Array, now: number, count: boolean, timed: boolean): string | Uint8Array {
    if (this.compress) {
      const t0 = timed ? performance.now() : 0;
      p = this.compress(bytesOf(p));
      if (count) countThrough(this.compressNode!, now);
      if (timed) this.compressNode!.processLatencyUs = elapsedUs(t0);
    }
    if (this.encrypt) {
      const t0 = timed ? performance.now() : 0;
      p = this.encrypt(bytesOf(p));
      if (count) countThrough(this.encryptNode!, now);
      if (timed) this.encryptNode!.processLatencyUs = elapsedUs(t0);
    }
    return p;
  }

  /**
   * A resent item with `field` set to true in each of its rows, re-encoded from the outputs it
   * was made of (template text that is not JSON is resent as it was). Uncounted.
   */
  mark(item: SinkItem, src: SinkSource, field: string): SinkItem {
    const now = Date.now();
    const outs = src.outs.map(([data, text]) => {
      let v: Value = data;
      if (text !== null) {
        try {
          v = parseGoJson(text);
        } catch {
          return new Output(data, text, item.props, 0);
        }
      }
      return new Output(markRows(v, field), null, item.props, 0);
    });
    let payload: Payload;
    if (src.batched) payload = this.batch(outs, now, false);
    else if (this.bytes) {
      const o = outs[0]!;
      payload = this.post(o.text ?? this.encoder!(o.data), now, false, false);
    } else payload = tupleData(outs[0]!);
    return new SinkItem(payload, item.props, item.rows, src, item.traceparent, item.key);
  }
}
