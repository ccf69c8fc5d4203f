/**
 * Where registered schemas live (rest-api.md §14.4): as eKuiper keeps them, one file per schema,
 * `<data>/schemas/protobuf/<name>.proto` (read-only ones may also ship in `<etc>/schemas/protobuf`),
 * so a schema can be dropped in by hand and is found at the next start. What the file cannot hold,
 * the schema's version, sits in the KV store (namespace `schema`, key `protobuf_<name>`).
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { idError } from "./ids.ts";
import type { Kv } from "./kv.ts";

export interface StoredSchema {
  readonly name: string;
  readonly content: string;
  /** Absolute path of the .proto file. */
  readonly file: string;
  readonly version: string;
}

const EXT = ".proto";

/** The `<name>.proto` files of `dir` whose names are valid ids, in name order. */
export function readSchemaDir(dir: string): { name: string; content: string; file: string }[] {
  if (!existsSync(dir)) return [];
  const out: { name: string; content: string; file: string }[] = [];
  for (const f of readdirSync(dir).sort()) {
    if (!f.endsWith(EXT)) continue;
    const name = f.slice(0, -EXT.length);
    if (idError(name)) continue;
    const file = join(dir, f);
    out.push({ name, content: readFileSync(file, "utf8"), file });
  }
  return out;
}

export class SchemaStore {
  /** `<data>/schemas/protobuf`, where created schemas are written. */
  readonly dir: string;

  constructor(
    private readonly kv: Kv,
    dataDir: string,
    /** `<etc>/schemas/protobuf`: schemas shipped with the configuration (a data file of the same name wins). */
    private readonly etcDir?: string,
  ) {
    this.dir = join(dataDir, "schemas", "protobuf");
  }

  /** Every stored schema: etc ones, then data ones (replacing etc ones of the same name). */
  load(): StoredSchema[] {
    const byName = new Map<string, StoredSchema>();
    for (const dir of [this.etcDir ? join(this.etcDir, "schemas", "protobuf") : undefined, this.dir]) {
      if (!dir) continue;
      for (const s of readSchemaDir(dir)) byName.set(s.name, { ...s, version: this.version(s.name) });
    }
    return [...byName.values()];
  }

  /** Writes the schema's file and version; returns the file's path. */
  save(name: string, content: string, version: string): string {
    mkdirSync(this.dir, { recursive: true });
    const file = join(this.dir, name + EXT);
    writeFileSync(file, content);
    if (version) this.kv.set("schema", `protobuf_${name}`, JSON.stringify({ version }));
    else this.kv.delete("schema", `protobuf_${name}`);
    return file;
  }

  /** Deletes the schema's files (a shipped etc one too, as eKuiper removes the file it loaded) and version. */
  remove(name: string): void {
    for (const dir of [this.dir, this.etcDir ? join(this.etcDir, "schemas", "protobuf") : undefined]) if (dir) rmSync(join(dir, name + EXT), { force: true });
    this.kv.delete("schema", `protobuf_${name}`);
  }

  private version(name: string): string {
    const v = this.kv.get("schema", `protobuf_${name}`);
    if (!v) return "";
    try {
      const o = JSON.parse(v) as { version?: unknown };
      return typeof o.version === "string" ? o.version : "";
    } catch {
      return "";
    }
  }
}
