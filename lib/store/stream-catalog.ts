/**
 * Stream and table definitions (eKuiper's stream processor): the management statements with their
 * exact result texts and errors (sql.md §2.3), persisted in the KV store, parsed definitions
 * cached in memory for the planner. Streams and tables share one namespace **[quirk]**.
 */
import { EngineError, ErrCode, errorText, TooLargeError } from "../errors.ts";
import { streamDef, type StreamDef } from "../plan/streams.ts";
import type { CreateStatement } from "../sql/ast.ts";
import type { FunctionSignatures } from "../sql/function-signatures.ts";
import { parseStatement } from "../sql/parse.ts";
import { describeText } from "./describe.ts";
import { idError } from "./ids.ts";
import type { DefinitionStore } from "./definition-store.ts";

export type StreamKind = "stream" | "table";

interface Stored {
  streamType: 0 | 1;
  streamKind: string;
  statement: string;
}

const title = (k: StreamKind) => (k === "stream" ? "Stream" : "Table");
const err = (message: string, code: number = ErrCode.streamTable) => new EngineError(message, code);

export class StreamCatalog {
  private readonly defs = new Map<string, StreamDef>();
  private readonly temp = new Set<string>();
  /** Told after a definition is created or replaced (`def`) and after it is removed (undefined). */
  onChange: ((name: string, def: StreamDef | undefined) => void) | undefined;
  /** Checks a definition against what the owner holds (a protobuf `SCHEMAID` is registered) before it is stored. */
  check: ((c: CreateStatement) => void) | undefined;

  constructor(
    private readonly kv: DefinitionStore,
    /** The functions statements are parsed with (a CREATE names none; other statements are refused by kind). */
    private readonly functions: FunctionSignatures,
    private readonly log: (msg: string) => void = () => {},
  ) {
    for (const ns of ["stream", "tempStream"] as const) {
      for (const [name, value] of kv.entries(ns)) {
        try {
          const st = JSON.parse(value) as Stored;
          const c = parseStatement(st.statement, this.functions);
          if (c.kind !== "create") continue;
          this.defs.set(name, streamDef(c, st.statement));
          if (ns === "tempStream") this.temp.add(name);
        } catch (e) {
          this.log(`cannot restore stream ${name}: ${errorText(e)}`);
        }
      }
    }
  }

  get(name: string): StreamDef | undefined {
    return this.defs.get(name);
  }

  /** All definitions (persistent first in key order, then temporary), for planning. */
  all(): ReadonlyMap<string, StreamDef> {
    return this.defs;
  }

  /** Names of one kind: persistent ones in ascending order, then temporary ones. */
  names(kind: StreamKind, tableKind?: string): string[] {
    const pick = (temp: boolean) =>
      [...this.defs.values()]
        .filter((d) => d.kind === kind && this.temp.has(d.name) === temp)
        .filter((d) => !tableKind || (tableKind === "lookup" ? d.options.KIND === "lookup" : d.options.KIND !== "lookup"))
        .map((d) => d.name)
        .sort(byteOrder);
    return [...pick(false), ...pick(true)];
  }

  /** Runs one management statement; returns the result text. Errors carry eKuiper's texts. */
  exec(sql: string): string {
    let s;
    try {
      s = parseStatement(sql, this.functions);
    } catch (e) {
      throw e instanceof TooLargeError ? e : err(errorText(e));
    }
    switch (s.kind) {
      case "create":
        this.create(s, sql);
        return `${title(s.streamKind)} ${s.name} is created.`;
      case "show": {
        const kind = s.what === "streams" ? "stream" : "table";
        const names = this.names(kind);
        return names.length ? names.join("\n") : `No ${kind} definitions are found.`;
      }
      case "describe":
        return describeText(this.describe(s.name, s.streamKind, "Describe"));
      case "explain":
        this.describe(s.name, s.streamKind, "Explain");
        return "TO BE SUPPORTED";
      case "drop":
        this.drop(s.name, s.streamKind);
        return `${title(s.streamKind)} ${s.name} is dropped.`;
      default:
        throw err(`Invalid stream statement: ${sql}`);
    }
  }

  /** DESCRIBE lookup with the "kind word only when it exists as the other kind" quirk. */
  describe(name: string, kind: StreamKind, verb: "Describe" | "Explain"): StreamDef {
    const d = this.defs.get(name);
    if (!d) throw err(`${verb} ${kind} fails, ${name} is not found.`);
    if (d.kind !== kind) throw err(`${verb} ${kind} fails, ${kind} ${name} is not found.`);
    return d;
  }

  private create(c: CreateStatement, sql: string): void {
    const idErr = idError(c.name);
    if (idErr) throw err(idErr);
    if (this.defs.has(c.name)) throw err(`Create ${c.streamKind} fails: Item ${c.name} already exists.`);
    this.checked(c);
    this.put(c, sql);
  }

  /** CREATE and PUT only: an import restores definitions as they were, even if a schema is missing. */
  private checked(c: CreateStatement): void {
    try {
      this.check?.(c);
    } catch (e) {
      throw err(errorText(e));
    }
  }

  private put(c: CreateStatement, sql: string): void {
    const stored: Stored = { streamType: c.streamKind === "stream" ? 0 : 1, streamKind: c.options.KIND ?? "", statement: sql };
    const temp = c.options.TEMP === true;
    this.kv.transaction(() => {
      this.kv.delete(temp ? "stream" : "tempStream", c.name);
      this.kv.set(temp ? "tempStream" : "stream", c.name, JSON.stringify(stored));
    });
    this.defs.set(c.name, streamDef(c, sql));
    if (temp) this.temp.add(c.name);
    else this.temp.delete(c.name);
    this.onChange?.(c.name, this.defs.get(c.name));
  }

  /** `PUT /streams/{name}`: upsert with eKuiper's replace checks (rest-api.md §4). */
  replace(name: string, sql: string, kind: StreamKind): string {
    let s;
    try {
      s = parseStatement(sql, this.functions);
    } catch (e) {
      throw e instanceof TooLargeError ? e : err(errorText(e));
    }
    if (s.kind !== "create") throw err(`Invalid stream statement: ${sql}`);
    if (s.streamKind !== kind) throw err(`${kind} ${name} is not found`, ErrCode.notFound);
    if (s.name !== name) throw err(`Replace ${name} fails: the sql statement must update the ${name} source.`);
    const idErr = idError(s.name);
    if (idErr) throw err(idErr);
    if (s.options.TEMP === true) throw err(`Replace ${name} fails: cannot replace with temp option.`);
    const old = this.defs.get(name);
    if (old) {
      if ((old.options.SHARED === true) !== (s.options.SHARED === true)) throw err(`Replace ${name} fails: do not support to change stream SHARED option.`);
      const ov = old.options.VERSION ?? "";
      const nv = s.options.VERSION ?? "";
      if (!((ov === "" && nv === "") || nv > ov)) throw err(`source ${name} already exists with version (${ov}), new version (${nv}) is lower`);
    }
    this.checked(s);
    this.put(s, sql);
    return `${title(kind)} ${name} is replaced.`;
  }

  /** Unconditional replace (imports): create or overwrite, no version check. */
  upsert(sql: string): StreamDef {
    const s = parseStatement(sql, this.functions);
    if (s.kind !== "create") throw err(`Invalid stream statement: ${sql}`);
    const idErr = idError(s.name);
    if (idErr) throw err(idErr);
    this.put(s, sql);
    return this.defs.get(s.name)!;
  }

  /** Drops a definition of any kind (shared store); throws `<kind> <name> is not found` (1002). */
  drop(name: string, kind: StreamKind): void {
    if (!this.defs.has(name)) throw err(`Drop ${kind} fails: ${kind} ${name} is not found.`, ErrCode.streamTable);
    this.remove(name);
  }

  remove(name: string): boolean {
    const had = this.defs.delete(name);
    this.temp.delete(name);
    this.kv.transaction(() => {
      this.kv.delete("stream", name);
      this.kv.delete("tempStream", name);
    });
    if (had) this.onChange?.(name, undefined);
    return had;
  }

  isTemp(name: string): boolean {
    return this.temp.has(name);
  }

  /** Removes every definition (full data import). */
  clear(): void {
    const names = [...this.defs.keys()];
    this.defs.clear();
    this.temp.clear();
    this.kv.transaction(() => {
      this.kv.clear("stream");
      this.kv.clear("tempStream");
    });
    for (const n of names) this.onChange?.(n, undefined);
  }
}

function byteOrder(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
