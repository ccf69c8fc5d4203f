/**
 * Sink encoders by `format` (rules-and-sinks.md §13): json (Go JSON), binary (the `self` field),
 * delimited (columns fixed at the first row [quirk]), urlencoded (Go `url.Values.Encode`) and
 * protobuf (the `schemaId` message of the schema registry).
 */
import { EngineError, ErrCode, RowError } from "../errors.ts";
import { fmtV, isObj, toStrConv, type Obj, type Value } from "../value/values.ts";
import { encodeGoJson } from "../value/json-encode.ts";
import { CUSTOM_FORMAT_ERROR, schemaNotFound, type SchemaRegistry } from "./schema-registry.ts";

/** Sink data → payload. Throws RowError when the data does not fit the format. */
export type Encoder = (data: Value) => string | Uint8Array;

export interface EncoderProps {
  readonly delimiter: string;
  readonly hasHeader: boolean;
  readonly fields: string[] | undefined;
  readonly schemaId: string;
}

const enc = new TextEncoder();

/** The sink's encoder; throws EngineError for an unknown format or a schema id that does not resolve. */
export function createEncoder(format: string, p: EncoderProps, schemas?: SchemaRegistry): Encoder {
  switch (format) {
    case "json":
      return jsonEncoder;
    case "binary":
      return binaryEncoder;
    case "delimited":
      return delimitedEncoder(p);
    case "urlencoded":
      return urlEncoder;
    case "protobuf":
      if (!schemas) throw schemaNotFound("protobuf", p.schemaId.split(".")[0] ?? "");
      return schemas.encoder(p.schemaId);
    case "custom":
      throw new EngineError(CUSTOM_FORMAT_ERROR, ErrCode.converter);
    default:
      throw new EngineError(`format type ${format} not supported`, ErrCode.converter);
  }
}

/** One function for every json sink (many rules hold one each). */
function jsonEncoder(d: Value): string {
  return encodeGoJson(d);
}

function binaryEncoder(d: Value): Uint8Array {
  if (!isObj(d)) throw new RowError(`unsupported type ${fmtV(d)}, must be a map`);
  const v = d.self;
  if (v === undefined) throw new RowError("field self not exist");
  if (v instanceof Uint8Array) return v;
  if (typeof v === "string") return enc.encode(v);
  throw new RowError(`field self is not bytes: ${fmtV(v)}`);
}

/** One delimited line: `row`'s values in the columns `c` (a missing one empty). */
export function delimitedLine(row: Obj, c: readonly string[], delimiter: string): string {
  let s = "";
  for (let i = 0; i < c.length; i++) {
    const v = row[c[i]!];
    s += (i ? delimiter : "") + (v === undefined ? "" : toStrConv(v));
  }
  return s;
}

/** The columns of a collection: its first row's keys, sorted [quirk], even with `fields`. */
export function delimitedColumns(rows: readonly Value[]): string[] {
  for (const r of rows) if (isObj(r)) return Object.keys(r).sort();
  return [];
}

/** The delimited encoder, and the columns it has fixed (undefined before the first row). */
export interface DelimitedEncoder extends Encoder {
  columns(): readonly string[] | undefined;
}

export function delimitedEncoder(p: EncoderProps): DelimitedEncoder {
  let cols: string[] | undefined = p.fields;
  const line = (row: Obj, c: string[]): string => delimitedLine(row, c, p.delimiter);
  const encode = (d: Value): string => {
    if (isObj(d)) {
      // [quirk] the column order is fixed by the first row for the life of the rule.
      cols ??= Object.keys(d).sort();
      return line(d, cols);
    }
    if (Array.isArray(d)) {
      const rows = d.filter(isObj);
      const c = delimitedColumns(rows);
      const lines = rows.map((r) => line(r, c));
      if (p.hasHeader) lines.unshift(c.join(p.delimiter));
      return lines.join("\n");
    }
    throw new RowError(`unsupported type ${fmtV(d)}, must be a map`);
  };
  return Object.assign(encode, { columns: () => cols });
}

/**
 * A single row's line with the header record eKuiper's delimited converter puts before it for the
 * csv file sink (`hasHeader`, rules-and-sinks.md §13.3): NUL, the header's length, NUL, the header.
 * Only the file sink is given it, and it strips it (`splitHeaderRecord`).
 */
export function withHeaderRecord(header: string, line: string): string {
  return `\0${header.length}\0${header}${line}`;
}

/** A payload's header record and line, or undefined when it carries none. */
export function splitHeaderRecord(payload: string): { header: string; line: string } | undefined {
  if (payload.charCodeAt(0) !== 0) return undefined;
  const at = payload.indexOf("\0", 1);
  if (at < 0) return undefined;
  const end = at + 1 + Number(payload.slice(1, at));
  return { header: payload.slice(at + 1, end), line: payload.slice(end) };
}

/** Go `url.QueryEscape`. */
function queryEscape(s: string): string {
  return encodeURIComponent(s)
    .replace(/%20/g, "+")
    .replace(/[!'()*]/g, (c) => "%" + c.charCodeAt(0).toString(16).toUpperCase());
}

function urlEncoder(d: Value): string {
  if (!isObj(d)) throw new RowError(`unsupported type ${fmtV(d)}, must be a map`);
  const parts: string[] = [];
  for (const k of Object.keys(d).sort()) {
    const v = d[k]!;
    const list = Array.isArray(v) ? v : [v];
    for (const x of list) parts.push(queryEscape(k) + "=" + queryEscape(toStrConv(x)));
  }
  return parts.join("&");
}
