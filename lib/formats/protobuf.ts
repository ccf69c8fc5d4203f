/**
 * The protobuf format (rules-and-sinks.md §13.5): `.proto` text parsed with protobufjs (field
 * names kept as written), and per message type a decoder (bytes → row) and an encoder (row →
 * bytes) whose per-field conversions are built once. Values as floe holds them: every integer
 * kind and enums are int64 (`bigint`, exact), floats and doubles float64, bytes `Uint8Array`,
 * nested messages objects, repeated fields arrays, maps objects.
 */
import protobuf from "protobufjs";
import { EngineError, ErrCode, RowError } from "../errors.ts";
import { fmtV, isObj, type Obj, type Value } from "../value/values.ts";
import type { FieldType, StreamField } from "../sql/ast.ts";
import { scanProto } from "./proto-scan.ts";

export type ProtoRoot = protobuf.Root;
export type ProtoType = protobuf.Type;

/** Supplies the text of an imported file (`import "b.proto";`), or undefined when there is none. */
export type ImportReader = (path: string) => string | undefined;

const PARSE_OPTIONS = { keepCase: true };

/**
 * Parses `text` (file `name`) and, transitively, the files it imports, into one resolved root.
 * Google's well-known types (`google/protobuf/*.proto`) come with protobufjs. Each file passes the
 * compile budget's pre-scan first (a CompileBudgetError over a limit). Throws EngineError with
 * protobufjs's reason (`illegal token …`, `no such type: …`, a missing import).
 */
export function parseProto(name: string, text: string, readImport: ImportReader): { root: ProtoRoot; pkg: string } {
  const root = new protobuf.Root();
  const seen = new Set<string>([name]);
  let pkg = "";
  const load = (file: string, source: string, main: boolean): void => {
    let parsed: protobuf.IParserResult;
    scanProto(file, source);
    try {
      parsed = protobuf.parse(source, root, PARSE_OPTIONS);
    } catch (e) {
      throw new EngineError(`${file}: ${(e as Error).message}`, ErrCode.undefined);
    }
    if (main) pkg = parsed.package ?? "";
    for (const imp of [...(parsed.imports ?? []), ...(parsed.weakImports ?? [])]) {
      if (seen.has(imp)) continue;
      seen.add(imp);
      const common = protobuf.common.get(imp) as protobuf.INamespace | null;
      if (common) {
        root.addJSON(common.nested ?? {});
        continue;
      }
      const t = readImport(imp);
      if (t === undefined) throw new EngineError(`${file}: cannot find imported file ${imp}`, ErrCode.undefined);
      load(imp, t, false);
    }
  };
  load(name, text, true);
  try {
    root.resolveAll();
  } catch (e) {
    throw new EngineError(`${name}: ${(e as Error).message}`, ErrCode.undefined);
  }
  return { root, pkg };
}

/** The message `name` of a parsed file: qualified by the file's package first, then as written. */
export function findMessage(root: ProtoRoot, pkg: string, name: string): ProtoType | undefined {
  for (const path of pkg ? [`${pkg}.${name}`, name] : [name]) {
    try {
      const t = root.lookup(path, [protobuf.Type]);
      if (t instanceof protobuf.Type) return t;
    } catch {
      // an ill-formed path: not found
    }
  }
  return undefined;
}

// ---------------------------------------------------------------------------------------------
// decoding

type FromProto = (v: unknown) => Value;

interface DecodeField {
  readonly name: string;
  readonly conv: FromProto;
  /** A singular message field left unset (null) is omitted from the row. */
  readonly omitNull: boolean;
  /** A oneof member (proto3 `optional` too) is read only when set: its default sits on the prototype. */
  readonly onlyOwn: boolean;
}

const hasOwn = Object.prototype.hasOwnProperty;

interface LongLike {
  low: number;
  high: number;
}

const TWO_32 = 4294967296;

function longToBigInt(v: unknown, unsigned: boolean): bigint {
  if (typeof v === "number" || typeof v === "string") return BigInt(v);
  const l = v as LongLike;
  const lo = l.low >>> 0;
  // `high` as a signed word gives the two's complement value of a signed kind directly.
  const hi = unsigned ? l.high >>> 0 : l.high | 0;
  const n = hi * TWO_32 + lo;
  // Most values fit a double exactly: one BigInt conversion instead of BigInt arithmetic.
  if (n <= Number.MAX_SAFE_INTEGER && n >= -Number.MAX_SAFE_INTEGER) return BigInt(n);
  return (BigInt(hi) << 32n) + BigInt(lo);
}

const LONG_KINDS = new Set(["int64", "sint64", "sfixed64", "uint64", "fixed64"]);
const INT_KINDS = new Set(["int32", "sint32", "sfixed32", "uint32", "fixed32"]);

function scalarFrom(type: string): FromProto {
  if (LONG_KINDS.has(type)) {
    const unsigned = type === "uint64" || type === "fixed64";
    return (v) => longToBigInt(v, unsigned);
  }
  if (INT_KINDS.has(type)) return (v) => BigInt(v as number);
  switch (type) {
    case "double":
    case "float":
      return (v) => v as number;
    case "bool":
      return (v) => v as boolean;
    case "string":
      return (v) => v as string;
    case "bytes":
      return (v) => {
        const b = v as Uint8Array;
        // protobufjs hands out Buffers on Bun/Node: a plain Uint8Array view of the same bytes.
        return b.constructor === Uint8Array ? b : new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
      };
  }
  throw new EngineError(`unsupported protobuf field type ${type}`, ErrCode.converter);
}

/** Map keys of 64-bit kinds arrive as protobufjs's 8-character hashes: back to decimal text. */
function mapKeyFrom(keyType: string): (k: string) => string {
  if (!LONG_KINDS.has(keyType)) return (k) => k;
  const unsigned = keyType === "uint64" || keyType === "fixed64";
  return (k) => (k.length === 8 && !/^-?\d+$/.test(k) ? longToBigInt(protobuf.util.longFromHash(k, unsigned), unsigned).toString() : k);
}

function elementFrom(field: protobuf.FieldBase, cache: Map<ProtoType, (m: unknown) => Obj>): FromProto {
  const rt = field.resolvedType;
  if (rt instanceof protobuf.Enum) return (v) => BigInt(v as number);
  if (rt instanceof protobuf.Type) {
    // Resolved lazily: a message type may contain itself.
    let dec: ((m: unknown) => Obj) | undefined;
    return (v) => (dec ??= messageFrom(rt, cache))(v);
  }
  return scalarFrom(field.type);
}

function fieldFrom(field: protobuf.FieldBase, cache: Map<ProtoType, (m: unknown) => Obj>): FromProto {
  const el = elementFrom(field, cache);
  if (field instanceof protobuf.MapField) {
    const key = mapKeyFrom(field.keyType);
    return (v) => {
      const out: Obj = {};
      const m = v as Record<string, unknown>;
      for (const k in m) out[key(k)] = el(m[k]);
      return out;
    };
  }
  if (field.repeated) {
    return (v) => {
      const a = v as unknown[];
      const out: Value[] = new Array(a.length);
      for (let i = 0; i < a.length; i++) out[i] = el(a[i]);
      return out;
    };
  }
  return el;
}

function messageFrom(type: ProtoType, cache: Map<ProtoType, (m: unknown) => Obj>): (m: unknown) => Obj {
  const hit = cache.get(type);
  if (hit) return hit;
  const fields: DecodeField[] = [];
  const fn = (m: unknown): Obj => {
    const src = m as Record<string, unknown>;
    const row: Obj = {};
    for (let i = 0; i < fields.length; i++) {
      const f = fields[i]!;
      if (f.onlyOwn && !hasOwn.call(src, f.name)) continue;
      const v = src[f.name];
      if (v === null || v === undefined) {
        if (!f.omitNull) row[f.name] = null;
        continue;
      }
      row[f.name] = f.conv(v);
    }
    return row;
  };
  cache.set(type, fn);
  for (const f of type.fieldsArray) {
    const message = f.resolvedType instanceof protobuf.Type && !f.repeated && !(f instanceof protobuf.MapField);
    fields.push({ name: f.name, conv: fieldFrom(f, cache), omitNull: message || f.partOf !== null, onlyOwn: f.partOf !== null });
  }
  return fn;
}

/**
 * Bytes → one row of every field of `type` (unset scalars read as their proto defaults, as the
 * Go decoder gives them; unset messages and oneof members are left out). A payload that is not
 * this message is a RowError (counted on the decoder; the rule goes on).
 */
export function protobufDecoder(type: ProtoType): (payload: Uint8Array) => Obj {
  const toRow = messageFrom(type, new Map());
  return (p) => {
    try {
      return toRow(type.decode(p));
    } catch (e) {
      throw new RowError(`fail to decode protobuf message ${type.name}: ${e instanceof Error ? e.message : String(e)}`);
    }
  };
}

// ---------------------------------------------------------------------------------------------
// encoding

type ToProto = (v: Value, name: string) => unknown;

function bad(type: string, name: string, v: Value): RowError {
  return new RowError(`invalid value for ${type} field ${name}: ${typeName(v)}(${fmtV(v)})`);
}

function typeName(v: Value): string {
  if (v === null) return "<nil>";
  if (typeof v === "bigint") return "int64";
  if (typeof v === "number") return "float64";
  if (typeof v === "string") return "string";
  if (typeof v === "boolean") return "bool";
  if (v instanceof Uint8Array) return "[]uint8";
  if (Array.isArray(v)) return "[]interface {}";
  return isObj(v) ? "map[string]interface {}" : "interface {}";
}

/** An integral value as bigint (floats truncate toward zero, as Go's conversion does). */
function integral(type: string, name: string, v: Value): bigint {
  if (typeof v === "bigint") return v;
  if (typeof v === "number" && Number.isFinite(v)) return BigInt(Math.trunc(v));
  throw bad(type, name, v);
}

const enc = new TextEncoder();
const dec = new TextDecoder();
const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

function scalarTo(type: string): ToProto {
  switch (type) {
    case "int64":
    case "sint64":
    case "sfixed64":
    case "uint64":
    case "fixed64": {
      const unsigned = type === "uint64" || type === "fixed64";
      return (v, name) => {
        // A safe integer goes as a number (protobufjs writes it exactly); beyond, as { low, high }
        // words of the 64-bit two's complement (no Long needed).
        if (typeof v === "number" && Number.isFinite(v)) {
          const t = Math.trunc(v);
          if (Number.isSafeInteger(t)) return t;
        } else if (typeof v === "bigint" && v <= MAX_SAFE && v >= -MAX_SAFE) return Number(v);
        const b = BigInt.asUintN(64, integral(type, name, v));
        return { low: Number(b & 0xffffffffn) | 0, high: Number(b >> 32n) | 0, unsigned };
      };
    }
    case "int32":
    case "sint32":
    case "sfixed32":
      return (v, name) => Number(BigInt.asIntN(32, integral(type, name, v)));
    case "uint32":
    case "fixed32":
      return (v, name) => Number(BigInt.asUintN(32, integral(type, name, v)));
    case "double":
    case "float":
      return (v, name) => {
        if (typeof v === "number") return v;
        if (typeof v === "bigint") return Number(v);
        throw bad(type, name, v);
      };
    case "bool":
      return (v, name) => {
        if (typeof v === "boolean") return v;
        throw bad(type, name, v);
      };
    case "string":
      return (v, name) => {
        if (typeof v === "string") return v;
        if (v instanceof Uint8Array) return dec.decode(v);
        throw bad(type, name, v);
      };
    case "bytes":
      return (v, name) => {
        if (v instanceof Uint8Array) return v;
        if (typeof v === "string") return enc.encode(v);
        throw bad(type, name, v);
      };
  }
  throw new EngineError(`unsupported protobuf field type ${type}`, ErrCode.converter);
}

function enumTo(e: protobuf.Enum): ToProto {
  return (v, name) => {
    if (typeof v === "string") {
      const n = e.values[v];
      if (n === undefined) throw new RowError(`invalid value for enum field ${name}: ${v} is not a value of ${e.name}`);
      return n;
    }
    return Number(BigInt.asIntN(32, integral(e.name, name, v)));
  };
}

function elementTo(field: protobuf.FieldBase, cache: Map<ProtoType, (row: Obj) => Record<string, unknown>>): ToProto {
  const rt = field.resolvedType;
  if (rt instanceof protobuf.Enum) return enumTo(rt);
  if (rt instanceof protobuf.Type) {
    let build: ((row: Obj) => Record<string, unknown>) | undefined;
    return (v, name) => {
      if (!isObj(v)) throw bad(rt.name, name, v);
      return (build ??= messageTo(rt, cache))(v);
    };
  }
  return scalarTo(field.type);
}

function fieldTo(field: protobuf.FieldBase, cache: Map<ProtoType, (row: Obj) => Record<string, unknown>>): ToProto {
  const el = elementTo(field, cache);
  if (field instanceof protobuf.MapField) {
    return (v, name) => {
      if (!isObj(v)) throw bad(`map<${field.keyType}, ${field.type}>`, name, v);
      const out: Record<string, unknown> = {};
      for (const k in v) {
        const x = v[k]!;
        if (x !== null) out[k] = el(x, name);
      }
      return out;
    };
  }
  if (field.repeated) {
    return (v, name) => {
      if (!Array.isArray(v)) throw bad(`repeated ${field.type}`, name, v);
      const out: unknown[] = new Array(v.length);
      for (let i = 0; i < v.length; i++) out[i] = el(v[i]!, name);
      return out;
    };
  }
  return el;
}

function messageTo(type: ProtoType, cache: Map<ProtoType, (row: Obj) => Record<string, unknown>>): (row: Obj) => Record<string, unknown> {
  const hit = cache.get(type);
  if (hit) return hit;
  const names: string[] = [];
  const convs: ToProto[] = [];
  const fn = (row: Obj): Record<string, unknown> => {
    const out: Record<string, unknown> = {};
    for (let i = 0; i < names.length; i++) {
      const n = names[i]!;
      const v = row[n];
      // Absent and null fields are left unset (their proto default on the wire).
      if (v === undefined || v === null) continue;
      out[n] = convs[i]!(v, n);
    }
    return out;
  };
  cache.set(type, fn);
  for (const f of type.fieldsArray) {
    names.push(f.name);
    convs.push(fieldTo(f, cache));
  }
  return fn;
}

/**
 * One row → the bytes of message `type`. Fields are taken by their .proto names; other keys of
 * the row are ignored. A value that does not fit its field is a RowError (counted on the encode
 * node). A collection (several rows) cannot be one message: use `sendSingle`.
 */
export function protobufEncoder(type: ProtoType): (data: Value) => Uint8Array {
  const build = messageTo(type, new Map());
  return (d) => {
    if (!isObj(d)) throw new RowError(`unsupported type ${fmtV(d)}, must be a map`);
    return type.encode(build(d)).finish();
  };
}

// ---------------------------------------------------------------------------------------------
// schema

function scalarType(t: string): FieldType {
  if (LONG_KINDS.has(t) || INT_KINDS.has(t)) return "bigint";
  if (t === "double" || t === "float") return "float";
  if (t === "bool") return "boolean";
  if (t === "bytes") return "bytea";
  return "string";
}

/**
 * The fields of `type` as stream fields (`GET /streams/{name}/schema` of a `SCHEMAID` stream):
 * integers and enums bigint, nested messages structs, repeated fields arrays, maps structs with no
 * declared fields. A message met again inside itself is an empty struct (the nesting is unbounded).
 */
export function messageFields(type: ProtoType, open: Set<ProtoType> = new Set()): StreamField[] {
  open.add(type);
  const out: StreamField[] = [];
  for (const f of type.fieldsArray) {
    const rt = f.resolvedType;
    let t: FieldType;
    if (f instanceof protobuf.MapField) t = { struct: [] };
    else if (rt instanceof protobuf.Type) t = { struct: open.has(rt) ? [] : messageFields(rt, open) };
    else t = rt instanceof protobuf.Enum ? "bigint" : scalarType(f.type);
    out.push({ name: f.name, type: f.repeated && !(f instanceof protobuf.MapField) ? { array: t } : t });
  }
  open.delete(type);
  return out;
}
