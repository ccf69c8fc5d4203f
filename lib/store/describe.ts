/**
 * The two DESCRIBE renderings of a stream/table: the text block of sql.md §2.4 (SQL statement and
 * CLI) and the JSON struct of `GET /streams/{name}` (rest-api.md §4).
 */
import type { FieldType, StreamField, StreamOptions } from "../sql/ast.ts";
import type { StreamDef } from "../plan/streams.ts";

function typeText(t: FieldType): string {
  if (typeof t === "string") return t;
  if ("array" in t) return `array(${typeText(t.array)})`;
  return `struct(${t.struct.map((f) => `${f.name} ${typeText(f.type)}`).join(", ")})`;
}

function defaultValueText(f: StreamField): string {
  const v = f.default;
  if (v === undefined) return "";
  if (typeof v === "string") return v;
  return String(v);
}

const TEXT_OPTIONS: [keyof StreamOptions, string][] = [
  ["CONF_KEY", "CONF_KEY"],
  ["DATASOURCE", "DATASOURCE"],
  ["FORMAT", "FORMAT"],
  ["SCHEMAID", "SCHEMAID"],
  ["KEY", "KEY"],
  ["RETAIN_SIZE", "RETAIN_SIZE"],
  ["SHARED", "SHARED"],
  ["STRICT_VALIDATION", "STRICT_VALIDATION"],
  ["TIMESTAMP", "TIMESTAMP"],
  ["TIMESTAMP_FORMAT", "TIMESTAMP_FORMAT"],
  ["TYPE", "TYPE"],
  ["EXTRA", "EXTRA"],
  ["VERSION", "VERSION"],
];

/** The DESCRIBE text (no trailing blank line; the CLI adds its own newlines). */
export function describeText(def: StreamDef): string {
  let s = "Fields\n" + "-".repeat(80) + "\n";
  if (def.fields && def.fields.length) {
    for (const f of def.fields) s += `${f.name}\t${typeText(f.type)}${f.default !== undefined ? `\tDEFAULT\t${defaultValueText(f)}` : ""}\n`;
    s += "\n";
  }
  for (const [k, label] of TEXT_OPTIONS) {
    const v = def.options[k];
    if (v === undefined || v === "" || v === false || v === 0) continue;
    s += `${label}: ${v}\n`;
  }
  return s;
}

function fieldTypeJson(t: FieldType): unknown {
  if (typeof t === "string") return t;
  if ("array" in t) return { Type: "array", ElementType: fieldTypeJson(t.array) };
  return { Type: "struct", Fields: t.struct.map((f) => ({ FieldType: fieldTypeJson(f.type), Name: f.name })) };
}

const JSON_OPTIONS: [keyof StreamOptions, string][] = [
  ["DATASOURCE", "datasource"],
  ["KEY", "key"],
  ["FORMAT", "format"],
  ["CONF_KEY", "confKey"],
  ["TYPE", "type"],
  ["STRICT_VALIDATION", "strictValidation"],
  ["TIMESTAMP", "timestamp"],
  ["TIMESTAMP_FORMAT", "timestampFormat"],
  ["SHARED", "shared"],
  ["SCHEMAID", "schemaid"],
  ["VERSION", "version"],
  ["EXTRA", "extra"],
  ["TEMP", "temp"],
  ["RETAIN_SIZE", "retainSize"],
  ["KIND", "kind"],
  ["DELIMITER", "delimiter"],
];

/** `{"Name","StreamFields","Options","StreamType","Statement"}` in Go struct order. */
export function describeJson(def: StreamDef): unknown {
  const options: Record<string, unknown> = {};
  for (const [k, key] of JSON_OPTIONS) {
    const v = def.options[k];
    if (v === undefined || v === "" || v === false || v === 0) continue;
    options[key] = v;
  }
  return {
    Name: def.name,
    StreamFields: def.fields === null ? null : def.fields.map((f) => {
      const o: Record<string, unknown> = { FieldType: fieldTypeJson(f.type), Name: f.name };
      if (f.defaultText !== undefined) o.DefaultClause = f.defaultText;
      return o;
    }),
    Options: options,
    StreamType: def.kind === "stream" ? 0 : 1,
    Statement: null,
  };
}

/**
 * JSON schema of a typed stream for `/streams/{name}/schema` (rest-api.md §4): a Go map, so keys
 * in byte order. [quirk] eKuiper reports `index` 0 for every declared field, nested ones included.
 */
export function schemaJson(fields: readonly StreamField[] | null): unknown {
  return fields === null ? null : schemaMap(fields);
}

function schemaMap(fields: readonly StreamField[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const f of [...fields].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) out[f.name] = fieldSchema(f.type, f.defaultText);
  return out;
}

function fieldSchema(t: FieldType, dflt: string | undefined): Record<string, unknown> {
  const o: Record<string, unknown> = { type: typeof t === "string" ? t : "array" in t ? "array" : "struct" };
  if (dflt !== undefined) o.default = dflt;
  if (typeof t !== "string") {
    if ("array" in t) o.items = fieldSchema(t.array, undefined);
    else o.properties = schemaMap(t.struct);
  }
  o.index = 0;
  return o;
}
