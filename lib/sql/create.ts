/**
 * CREATE STREAM/TABLE post-processing (sql §3): option values typed as eKuiper stores them,
 * DEFAULT literals converted, and the parse-time checks with their exact messages.
 */
import { EngineError, ErrCode } from "../errors.ts";
import { parseGoBool, parseGoFloat, parseGoInt } from "../value/values.ts";
import type { CreateStatement, FieldType, StreamField, StreamOptions } from "./ast.ts";

interface RawField {
  name: string;
  type: RawType;
  defaultLit?: { text: string; string?: boolean };
}
type RawType = Exclude<FieldType, { struct: StreamField[] }> | { struct: RawField[] } | { array: RawType };

export interface RawCreate {
  kind: "create";
  streamKind: "stream" | "table";
  name: string;
  fields: RawField[] | null;
  options: { name: string; value: string }[];
}

/** eKuiper's registered formats; floe decodes json, binary, delimited and urlencoded (formats). */
export const FORMATS = new Set(["json", "binary", "delimited", "urlencoded", "protobuf", "custom"]);

const BOOL_OPTIONS = new Set(["STRICT_VALIDATION", "SHARED", "TEMP"]);

function fail(message: string): never {
  throw new EngineError(message, ErrCode.parser);
}

export function finishCreate(raw: RawCreate): CreateStatement {
  const options: Record<string, string | boolean | number> = {};
  for (const { name, value } of raw.options) {
    if (BOOL_OPTIONS.has(name)) {
      const up = value.toUpperCase();
      if (up !== "TRUE" && up !== "FALSE") fail(`found "${value}", expect TRUE/FALSE value in ${name} option.`);
      options[name] = up === "TRUE";
    } else if (name === "RETAIN_SIZE") {
      if (!/^[+-]?\d+$/.test(value)) fail(`found "${value}", expect number value in RETAIN_SIZE option.`);
      options[name] = Number(value);
    } else if (name === "KIND" || name === "VERSION") {
      options[name] = value.toLowerCase();
    } else {
      if (name === "EXTRA") {
        try {
          JSON.parse(value);
        } catch {
          fail("invalid extra option, expect JSON string");
        }
      }
      options[name] = value;
    }
  }
  const opts = options as StreamOptions;
  const fields = raw.fields === null ? null : raw.fields.map(convertField);
  checkStream(raw.streamKind, fields, opts);
  return { kind: "create", streamKind: raw.streamKind, name: raw.name, fields, options: opts };
}

function convertType(t: RawType): FieldType {
  if (typeof t === "string") return t;
  if ("array" in t) return { array: convertType(t.array) };
  return { struct: t.struct.map(convertField) };
}

function convertField(f: RawField): StreamField {
  const type = convertType(f.type);
  const out: StreamField = { name: f.name, type };
  if (f.defaultLit) {
    const text = f.defaultLit.text;
    out.defaultText = f.defaultLit.string ? `"${text}"` : text;
    out.default = convertDefault(type, text);
  }
  return out;
}

function convertDefault(type: FieldType, text: string): bigint | number | string | boolean {
  switch (type) {
    case "bigint": {
      const v = parseGoInt(text);
      if (v === undefined) fail(`cannot convert string(${text}) to int64`);
      return v;
    }
    case "float": {
      const v = parseGoFloat(text);
      if (v === undefined) fail(`cannot convert string(${text}) to float64`);
      return v;
    }
    case "boolean": {
      const v = parseGoBool(text);
      if (v === undefined) fail(`cannot convert string(${text}) to bool`);
      return v;
    }
    case "string":
      return text;
    case "bytea":
    case "datetime":
      return fail(`DEFAULT clause is not supported for ${type}`);
    default:
      return fail(`DEFAULT clause is not supported for ${"array" in type ? "*ast.ArrayType" : "*ast.RecType"}`);
  }
}

function checkStream(kind: "stream" | "table", fields: StreamField[] | null, o: StreamOptions): void {
  const format = (o.FORMAT ?? "json").toLowerCase();
  if (!FORMATS.has(format)) fail(`option 'format=${o.FORMAT}' is invalid`);
  if (format === "binary") {
    if (kind === "table") fail("'binary' format is not supported for table");
    if (fields && fields.length > 1) fail("'binary' format stream can have only one field");
    if (fields && fields.length === 1 && fields[0]!.type !== "bytea")
      fail("'binary' format stream can have only 'bytea' type field");
  }
  if (kind === "table" && o.KIND === "lookup" && (o.TYPE ?? "").toLowerCase() === "memory" && !o.KEY)
    fail('Option "key" is required for memory lookup table.');
}
