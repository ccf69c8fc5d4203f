/**
 * The schema registry (rest-api.md §14.4): the registered protobuf schemas by name, each parsed
 * once, and their messages by schema id `<schemaName>.<MessageName>` (the `SCHEMAID` of a stream,
 * the `schemaId` of a sink). The daemon's Engine owns one and persists it (store/schemas.ts);
 * rules read it when they build their decoders and encoders. A running rule keeps the codec it
 * started with; an update reaches rules at their next start, as in eKuiper.
 */
import { EngineError, ErrCode } from "../errors.ts";
import type { StreamField } from "../sql/ast.ts";
import type { ProtoType } from "./protobuf.ts";

let protobufModule: typeof import("./protobuf.ts") | undefined;
/**
 * The protobuf codec (protobufjs), loaded when a schema is first parsed: most rules, and a daemon
 * without schemas, never need it (start-up time and memory).
 */
function protobuf(): typeof import("./protobuf.ts") {
  return (protobufModule ??= require("./protobuf.ts") as typeof import("./protobuf.ts"));
}

/** One registered protobuf schema. */
export interface SchemaEntry {
  readonly name: string;
  /** The .proto text. */
  readonly content: string;
  /** Where the text is stored (`<data>/schemas/protobuf/<name>.proto`); empty when only in memory. */
  readonly file: string;
  /** The schema's version (updates may not lower it); empty when none was given. */
  readonly version: string;
}

/** The schema types eKuiper's default build registers; only protobuf has a codec in floe. */
export const SCHEMA_TYPES = ["protobuf", "custom"] as const;

/** eKuiper's `custom` format and schemas load a Go plugin (.so) as their codec. */
export const CUSTOM_FORMAT_ERROR = "custom formats are Go plugins (.so): floe does not load Go plugins";

/** eKuiper's text for a schema id whose schema is not registered (rules-and-sinks.md §13.5). */
export function schemaNotFound(type: string, name: string): EngineError {
  return new EngineError(`schema type ${type} id ${name} not found in registry`, ErrCode.converter);
}

type Parsed = ReturnType<typeof import("./protobuf.ts").parseProto>;

export class SchemaRegistry {
  private readonly schemas = new Map<string, SchemaEntry>();
  /**
   * Parsed files by schema name and their messages by schema id, so that a schema is parsed once:
   * at its upload, or at its first use after a start. Cleared on every change (imports cross schemas).
   */
  private parsed = new Map<string, Parsed>();
  private readonly messages = new Map<string, ProtoType>();

  /** Registered names, ascending. */
  names(): string[] {
    return [...this.schemas.keys()].sort();
  }

  get(name: string): SchemaEntry | undefined {
    return this.schemas.get(name);
  }

  /** Parses `content` as schema `name` would be (imports from the registered schemas); throws EngineError. */
  check(name: string, content: string): void {
    this.parsed.set(name, this.parse(name, content));
  }

  /** A copy of this registry with `entries` added or replaced (to check schemas that import each other). */
  with(entries: readonly SchemaEntry[]): SchemaRegistry {
    const r = new SchemaRegistry();
    for (const e of this.schemas.values()) r.schemas.set(e.name, e);
    for (const e of entries) r.schemas.set(e.name, e);
    return r;
  }

  set(entry: SchemaEntry): void {
    this.schemas.set(entry.name, entry);
    this.changed();
  }

  /**
   * Registers `entries`, which `checked` (this registry `with` them) parsed: what it parsed is
   * kept, so the next `CREATE STREAM` or rule start does not parse the schemas again.
   */
  adopt(checked: SchemaRegistry, entries: readonly SchemaEntry[]): void {
    for (const e of entries) this.schemas.set(e.name, e);
    this.changed();
    this.parsed = new Map(checked.parsed);
  }

  delete(name: string): boolean {
    this.changed();
    return this.schemas.delete(name);
  }

  clear(): void {
    this.schemas.clear();
    this.changed();
  }

  private changed(): void {
    this.parsed.clear();
    this.messages.clear();
  }

  /**
   * The message of schema id `<schemaName>.<MessageName>`. Throws EngineError: `invalid schemaId`,
   * `schema type protobuf id <name> not found in registry`, a schema that no longer parses, or
   * `message type <m> not found in schema <name>`.
   */
  message(schemaId: string): ProtoType {
    const hit = this.messages.get(schemaId);
    if (hit) return hit;
    const parts = schemaId.split(".");
    if (parts.length !== 2 || !parts[0] || !parts[1]) throw new EngineError(`invalid schemaId: ${schemaId}, expect <schemaName>.<MessageName>`, ErrCode.converter);
    const [name, msg] = parts as [string, string];
    const entry = this.schemas.get(name);
    if (!entry) throw schemaNotFound("protobuf", name);
    let file = this.parsed.get(name);
    if (!file) {
      file = this.parse(name, entry.content);
      this.parsed.set(name, file);
    }
    const type = protobuf().findMessage(file.root, file.pkg, msg);
    if (!type) throw new EngineError(`message type ${msg} not found in schema ${name}`, ErrCode.converter);
    this.messages.set(schemaId, type);
    return type;
  }

  /** The stream fields of schema id `<schemaName>.<MessageName>` (a schemaless protobuf stream's schema). */
  fields(schemaId: string): StreamField[] {
    const type = this.message(schemaId);
    return protobuf().messageFields(type);
  }

  decoder(schemaId: string): ReturnType<typeof import("./protobuf.ts").protobufDecoder> {
    const type = this.message(schemaId);
    return protobuf().protobufDecoder(type);
  }

  encoder(schemaId: string): ReturnType<typeof import("./protobuf.ts").protobufEncoder> {
    const type = this.message(schemaId);
    return protobuf().protobufEncoder(type);
  }

  /** `import "b.proto"` reads registered schema `b` (schemas are stored side by side as `<name>.proto`). */
  private parse(name: string, content: string): Parsed {
    return protobuf().parseProto(`${name}.proto`, content, (path) => (path.endsWith(".proto") ? this.schemas.get(path.slice(0, -6))?.content : undefined));
  }
}

/**
 * A stream's `FORMAT` and `SCHEMAID` against the registry, at CREATE time: a protobuf stream must
 * name a registered schema and one of its messages; `custom` needs a Go plugin. Throws EngineError.
 */
export function checkFormat(schemas: SchemaRegistry, format: string | undefined, schemaId: string | undefined): void {
  const f = (format ?? "json").toLowerCase();
  if (f === "protobuf") schemas.message(schemaId ?? "");
  else if (f === "custom") throw new EngineError(CUSTOM_FORMAT_ERROR, ErrCode.converter);
}
