/**
 * The preprocessor (`<n>_preprocessor`): STRICT_VALIDATION conversions of a typed stream
 * (sql §3.8) and event-time extraction from the TIMESTAMP field (sql §3.9).
 */
import { RowError } from "../errors.ts";
import { Tuple } from "../expr/row.ts";
import { DateTime, toTime } from "../value/time.ts";
import { fmtV, isObj, typeValue, type Obj, type Value } from "../value/values.ts";
import type { FieldType, StreamField } from "../sql/ast.ts";
import { Collection, type Item } from "../core/item.ts";
import { Operator, type OpEnv } from "../core/operator.ts";
import type { PreprocessorSpec } from "../plan/specs.ts";

function mismatch(v: Value, to: string): RowError {
  return new RowError(`cannot convert ${typeValue(v)} to ${to}`);
}

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** Converts `v` to the declared type with eKuiper's CONVERT_SAMEKIND rules; throws the cause. */
export function convertStrict(v: Value, type: FieldType, spec: PreprocessorSpec): Value {
  switch (type) {
    case "bigint":
      if (typeof v === "bigint") return v;
      if (typeof v === "number" && Number.isFinite(v)) return BigInt(Math.trunc(v));
      throw mismatch(v, "int64");
    case "float":
      if (typeof v === "number") return v;
      if (typeof v === "bigint") return Number(v);
      throw mismatch(v, "float64");
    case "boolean":
      if (typeof v === "boolean") return v;
      throw mismatch(v, "bool");
    case "string":
      if (typeof v === "string") return v;
      if (v instanceof Uint8Array) return new TextDecoder().decode(v);
      throw mismatch(v, "string");
    case "datetime":
      if (v instanceof DateTime) return v;
      return toTime(v, spec.zone, spec.timestampFormat);
    case "bytea":
      if (v instanceof Uint8Array) return v;
      if (typeof v === "string") return BASE64.test(v) ? new Uint8Array(Buffer.from(v, "base64")) : new TextEncoder().encode(v);
      throw mismatch(v, "bytea");
  }
  if ("array" in type) {
    if (v === null) return null;
    if (!Array.isArray(v)) throw new RowError(`expect array but got ${fmtV(v)}`);
    // eKuiper converts a simple-typed slice element by element, null included (`cannot convert
    // <nil>(<nil>) to float64`); a null array or struct element stays null.
    const simple = typeof type.array === "string";
    return v.map((el) => {
      if (el === null && !simple) return null;
      try {
        return convertStrict(el, type.array, spec);
      } catch (e) {
        throw e instanceof RowError ? new RowError(`array element type mismatch: ${e.message}`) : e;
      }
    });
  }
  if (v === null) return null;
  let obj: Value = v;
  if (typeof v === "string") {
    try {
      obj = JSON.parse(v) as Value;
    } catch {
      throw new RowError(`expect struct but found ${typeValue(v)}`);
    }
  }
  if (!isObj(obj)) throw new RowError(`expect struct but found ${typeValue(v)}`);
  return validateFields(obj, type.struct, spec);
}

/** Case-insensitive key lookup, exact spelling first. */
function lookup(data: Obj, name: string): string | undefined {
  if (name in data) return name;
  const lower = name.toLowerCase();
  for (const k in data) if (k.toLowerCase() === lower) return k;
  return undefined;
}

function validateFields(data: Obj, fields: StreamField[], spec: PreprocessorSpec): Obj {
  const out: Obj = { ...data };
  for (const f of fields) {
    const key = lookup(data, f.name);
    if (key === undefined) {
      if (f.default === undefined) throw new RowError(`field ${f.name} is not found`);
      out[f.name] = f.default;
      continue;
    }
    try {
      out[f.name] = convertStrict(data[key]!, f.type, spec);
    } catch (e) {
      throw e instanceof RowError ? new RowError(`field ${f.name} type mismatch: ${e.message}`) : e;
    }
  }
  return out;
}

export class PreprocessorOp extends Operator {
  private readonly spec: PreprocessorSpec;
  constructor(name: string, env: OpEnv, spec: PreprocessorSpec) {
    super(name, env, "error in preprocessor: ");
    this.spec = spec;
  }

  protected process(item: Item): void {
    if (item instanceof Tuple) {
      this.metrics.messagesProcessed++;
      this.apply(item);
      this.emit(item);
    } else if (item instanceof Collection) {
      for (const r of item.rows) if (r instanceof Tuple) this.apply(r);
      this.metrics.messagesProcessed += item.rows.length;
      this.emit(item);
    }
  }

  private apply(t: Tuple): void {
    const spec = this.spec;
    if (spec.strict) t.data = validateFields(t.data, spec.strict, spec);
    if (spec.timestampField !== undefined) t.ts = eventTime(t.data, spec);
  }
}

/** The row's event time in epoch ms from the TIMESTAMP field (sql §3.9). */
function eventTime(data: Obj, spec: PreprocessorSpec): number {
  const f = spec.timestampField!;
  const v = data[f];
  if (v === undefined) throw new RowError(`cannot find timestamp field ${f} in tuple ${fmtV(data)}`);
  if (typeof v === "bigint") return Number(v);
  if (typeof v === "number") return Math.trunc(v);
  try {
    return toTime(v, spec.zone, spec.timestampFormat).ms;
  } catch (e) {
    throw e instanceof RowError ? new RowError(`cannot convert timestamp field ${f} to timestamp with error ${e.message}`) : e;
  }
}
