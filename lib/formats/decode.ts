/**
 * Payload decoders of byte sources (rules-and-sinks.md §13): json (typed by the stream schema,
 * sql §3.7), binary (`self`), delimited (`col0`, `col1`, … or the schema's names), urlencoded and
 * protobuf (the `SCHEMAID` message of the schema registry).
 */
import { EngineError, ErrCode, RowError } from "../errors.ts";
import { isObj, type Obj, type Value } from "../value/values.ts";
import type { FieldType, StreamField } from "../sql/ast.ts";
import type { StreamDef } from "../plan/streams.ts";
import { DEPTH_ERROR, MIN_DEEP_LENGTH, valueTooDeep } from "../value/json-depth.ts";
import { CUSTOM_FORMAT_ERROR, schemaNotFound, type SchemaRegistry } from "./schema-registry.ts";

/**
 * Bytes → one row, or the rows of a payload holding several (a JSON array). One row is returned
 * as it is, not in a list of one: a list per message was garbage on every message's way in.
 * Throws RowError (a decode error: counted, the rule goes on).
 */
export type Decoder = (payload: Uint8Array) => Obj | Obj[];

const utf8 = new TextDecoder();
/** 2^63: the first whole number past int64. */
const INT64_END = 2 ** 63;

export interface DecoderProps {
  readonly useInt64ForWholeNumber?: boolean;
  /** Where `FORMAT="protobuf"` finds its `SCHEMAID` (none: no schema is registered). */
  readonly schemas?: SchemaRegistry;
}

/** The stream's decoder; throws EngineError for an unknown format or a schema id that does not resolve. */
export function createDecoder(def: StreamDef, props: DecoderProps = {}): Decoder {
  const format = (def.options.FORMAT ?? "json").toLowerCase();
  switch (format) {
    case "json":
      return jsonDecoder(def.fields, !!props.useInt64ForWholeNumber);
    case "binary": {
      const key = def.fields?.[0]?.name ?? "self";
      return (p) => ({ [key]: p });
    }
    case "delimited":
      return delimitedDecoder(def);
    case "urlencoded":
      return urlencodedDecoder;
    case "protobuf": {
      const id = def.options.SCHEMAID ?? "";
      if (!props.schemas) throw schemaNotFound("protobuf", id.split(".")[0] ?? "");
      return props.schemas.decoder(id);
    }
    case "custom":
      throw new EngineError(CUSTOM_FORMAT_ERROR, ErrCode.converter);
    default:
      throw new EngineError(`format type ${def.options.FORMAT} not supported`, ErrCode.converter);
  }
}

function jsonDecoder(fields: StreamField[] | null, int64: boolean): Decoder {
  const row = (r: Obj): Obj => (fields ? typedRow(r, fields) : int64 ? wholeToInt(r) : r);
  return (p) => {
    const text = utf8.decode(p);
    let v: unknown;
    try {
      v = JSON.parse(text);
    } catch (e) {
      throw new RowError(`invalid character in JSON payload: ${(e as Error).message}`);
    }
    // Deeper than eKuiper's limit: a decode error (short payloads cannot be; json-depth.ts).
    if (p.length >= MIN_DEEP_LENGTH && valueTooDeep(v)) throw new RowError(DEPTH_ERROR);
    // One object (the common payload): JSON.parse makes nothing else an object but arrays.
    if (typeof v === "object" && v !== null && !Array.isArray(v)) return row(v as Obj);
    const rows = Array.isArray(v) ? v : [v];
    const out: Obj[] = [];
    for (const r of rows) {
      if (!isObj(r as Value)) throw new RowError(`only map[string]interface{} and []map[string]interface{} is supported`);
      out.push(row(r as Obj));
    }
    return out;
  };
}

function wholeToInt(o: Obj): Obj {
  for (const k in o) {
    const v = o[k];
    if (typeof v === "number" && Number.isInteger(v)) o[k] = BigInt(v);
  }
  return o;
}

function typedRow(data: Obj, fields: StreamField[]): Obj {
  const out: Obj = {};
  for (const f of fields) {
    const v = data[f.name];
    if (v === undefined) continue;
    out[f.name] = typedValue(v, f.type, f.name);
  }
  return out;
}

function wrongType(key: string, v: Value, t: FieldType): RowError {
  const kind = v === true || v === false ? String(v) : Array.isArray(v) ? "array" : isObj(v) ? "object" : typeof v;
  return new RowError(`${key} has wrong type:${kind}, expect:${typeof t === "string" ? t : "array" in t ? "array" : "struct"}`);
}

/** JSON value → declared type (sql §3.7). */
function typedValue(v: Value, t: FieldType, key: string): Value {
  if (v === null) return null;
  if (typeof t === "string") {
    switch (t) {
      case "bigint":
        if (typeof v === "number") {
          // Past int64 a BIGINT cannot hold it (Go's decoder refuses it too).
          if (!Number.isInteger(v) || v >= INT64_END || v < -INT64_END) throw new RowError(`cannot parse int64 from "${v}"`);
          return BigInt(v);
        }
        throw wrongType(key, v, t);
      case "float":
        // JSON.parse reads a number past float64 (1e400) as Infinity; Go's decoder refuses it.
        if (typeof v === "number") {
          if (!Number.isFinite(v)) throw new RowError(`${key} is out of the float64 range`);
          return v;
        }
        throw wrongType(key, v, t);
      case "string":
        if (typeof v === "string") return v;
        if (typeof v === "number") return String(v);
        throw wrongType(key, v, t);
      case "boolean":
        if (typeof v === "boolean") return v;
        if (typeof v === "number") return v !== 0;
        if (typeof v === "string") return v === "true" || v === "1" || v === "t" || v === "T" || v === "TRUE" || v === "True";
        throw wrongType(key, v, t);
      case "datetime":
        if (typeof v === "number" || typeof v === "string") return v;
        throw wrongType(key, v, t);
      case "bytea":
        if (typeof v === "string") return new Uint8Array(Buffer.from(v, "base64"));
        throw wrongType(key, v, t);
    }
  }
  if ("array" in t) {
    if (!Array.isArray(v)) throw wrongType(key, v, t);
    return v.map((x) => typedValue(x, t.array, key));
  }
  if (!isObj(v)) throw wrongType(key, v, t);
  return typedRow(v, t.struct);
}

/**
 * The most fields floe reads from one delimited payload. eKuiper has no limit; a 1 MiB line of
 * delimiters (a million `col<i>` keys) held the event loop for seconds, so a wider payload is a
 * decode error (checked before any row is built).
 */
export const MAX_DELIMITED_FIELDS = 10_000;

function delimitedDecoder(def: StreamDef): Decoder {
  const sep = def.options.DELIMITER ?? ",";
  const names = def.fields?.map((f) => f.name);
  return (p) => {
    const parts = utf8.decode(p).split(sep, MAX_DELIMITED_FIELDS + 1);
    if (parts.length > MAX_DELIMITED_FIELDS) throw new RowError(`delimited payload has more than ${MAX_DELIMITED_FIELDS} fields`);
    const row: Obj = {};
    for (let i = 0; i < parts.length; i++) row[names?.[i] ?? `col${i}`] = parts[i]!;
    return row;
  };
}

/** `%` not followed by two hex digits: Go's url.ParseQuery refuses the payload. */
const BAD_ESCAPE = /%(?![0-9A-Fa-f]{2})/;

function urlencodedDecoder(p: Uint8Array): Obj {
  const text = utf8.decode(p);
  const bad = text.includes("%") ? BAD_ESCAPE.exec(text) : null;
  if (bad) throw new RowError(`invalid URL escape ${JSON.stringify(text.slice(bad.index, bad.index + 3))}`);
  return Object.fromEntries(new URLSearchParams(text)) as Obj;
}
