/**
 * The file source (rules-and-sinks.md §11.1). `path` (relative: against the eKuiper root, the
 * parent of the etc dir — RuntimeEnv.baseDir) joined with DATASOURCE names a file or a directory.
 * `json` files are split into their array elements and `lines` files into lines, each a payload
 * for the stream's decoder; `csv` rows become string maps. A file is read once (then EOF) or every
 * `interval`; a directory's files are read oldest modification first, then the directory is
 * watched (interval 0) or rescanned every interval for new or modified files. Reading pauses
 * while the bus refuses (lines are read chunk by chunk). Metadata: `file`, the absolute path.
 */
import { existsSync, mkdirSync, statSync, watch, type FSWatcher } from "node:fs";
import { copyFile, readdir, rename, stat, unlink } from "node:fs/promises";
import { basename, isAbsolute, join, resolve } from "node:path";
import { EngineError, errorText } from "../../errors.ts";
import type { Obj } from "../../value/values.ts";
import { DECOMPRESSIONS, decompressBytes } from "../../formats/decompress.ts";
import { PropReader, type Props } from "../../config/props.ts";
import { LineWindow, parseCsvRecord, readLines, splitJsonArray } from "./read.ts";
import { SourceMessage } from "../../source/message.ts";
import type { SourceConnector, SourceContext } from "../../source/connector.ts";

export interface FileSourceEnv {
  /** The eKuiper root relative `path` and `moveTo` resolve against. */
  readonly baseDir: string;
}

type FileType = "json" | "lines" | "csv";

/** Records per bus publish. */
const BATCH = 1024;
/** Quiet time after the last change event of a watched file before it is read. */
const SETTLE_MS = 50;

const utf8 = new TextDecoder();

export class FileSource implements SourceConnector {
  readonly fileType: FileType;
  /** The absolute file or directory read. */
  readonly path: string;
  private readonly isDir: boolean;
  private readonly interval: number;
  private readonly sendInterval: number;
  private readonly action: number;
  private readonly moveTo: string;
  private readonly ignoreStart: number;
  private readonly ignoreEnd: number;
  private readonly hasHeader: boolean;
  private readonly columns: string[] | undefined;
  private readonly delimiter: string;
  private readonly decompression: string;
  /** JSON files are split into elements only for the json format; other formats get the file. */
  private readonly splitJson: boolean;
  /** A scan table's file: one message per json file / csv batch (its rows together), not per row. */
  private readonly batched: boolean;
  private closed = false;
  private watcher: FSWatcher | undefined;
  private readonly timers = new Set<ReturnType<typeof setTimeout>>();
  private chain: Promise<void> = Promise.resolve();
  /** Directory mode: the modification time (ms) each file had when it was last read. */
  private readonly seen = new Map<string, number>();
  /** File mode: messages of the current read published so far, and messages still to skip (rewind). */
  private published = 0;
  private skip = 0;

  constructor(props: Props, env: FileSourceEnv) {
    const r = new PropReader(props);
    const ft = r.str("fileType", "json").toLowerCase();
    if (!ft) throw new EngineError("missing or invalid property fileType, must be 'json'");
    if (ft === "parquet") throw new EngineError("fileType parquet is not supported: floe has no parquet reader (eKuiper full build only)");
    if (ft !== "json" && ft !== "lines" && ft !== "csv") throw new EngineError(`invalid property fileType: ${ft}`);
    this.fileType = ft;
    const p = r.str("path");
    if (!p) throw new EngineError("missing property Path");
    let dir = p;
    if (!isAbsolute(p)) {
      dir = resolve(env.baseDir, p);
      if (!existsSync(dir)) throw new EngineError(`invalid path ${p}`);
    }
    this.path = join(dir, r.str("datasource"));
    this.interval = r.duration("interval", 0);
    this.sendInterval = r.duration("sendInterval", 0);
    const action = r.int("actionAfterRead", 0);
    if (action < 0 || action > 2) throw new EngineError(`invalid actionAfterRead: ${action}`);
    this.action = action;
    this.moveTo = "";
    if (action === 2) {
      const m = r.str("moveTo");
      if (!m) throw new EngineError("missing moveTo when actionAfterRead is 2");
      this.moveTo = isAbsolute(m) ? m : resolve(env.baseDir, m);
      if (!existsSync(this.moveTo)) {
        try {
          mkdirSync(this.moveTo, { recursive: true });
        } catch (e) {
          throw new EngineError(`fail to create dir for moveTo ${this.moveTo}: ${errorText(e)}`, undefined, { cause: e });
        }
      } else if (!statSync(this.moveTo).isDirectory()) throw new EngineError(`moveTo ${this.moveTo} is not a directory`);
    }
    this.ignoreStart = Math.max(0, r.int("ignoreStartLines", 0));
    this.ignoreEnd = Math.max(0, r.int("ignoreEndLines", 0));
    this.hasHeader = r.bool("hasHeader");
    this.columns = r.strList("columns");
    this.delimiter = (r.str("delimiter", ",") || ",").slice(0, 1);
    this.decompression = r.str("decompression").toLowerCase();
    if (this.decompression) {
      if (ft !== "json") throw new EngineError(`decompression is not supported for ${ft} file type`);
      if (!DECOMPRESSIONS.has(this.decompression)) throw new EngineError(`unsupported decompression type ${this.decompression}`);
    }
    this.batched = r.bool("isTable");
    this.splitJson = r.str("format", "json").toLowerCase() === "json" && !this.batched;
    if (!existsSync(this.path)) throw new EngineError(`file ${this.path} not exist`);
    this.isDir = statSync(this.path).isDirectory();
  }

  open(ctx: SourceContext): void {
    ctx.status.connected();
    const run = this.isDir ? this.runDir(ctx) : this.runFile(ctx);
    run.catch((e: unknown) => {
      if (!this.closed) ctx.exception(errorText(e));
    });
  }

  /**
   * `$$offset`: a file's position is the number of its messages the rule consumed; a directory's
   * is the modification time of each file read (a file still being consumed counts as read).
   */
  offset(unconsumed: number): unknown {
    if (this.isDir) return { seen: [...this.seen] };
    return { line: Math.max(0, this.published - unconsumed) };
  }

  /** Resumes after a saved `offset()`; reset_state's `{"line": n}` (file) or `{"seen": [[file, mtimeMs]]}` (directory). */
  rewind(state: unknown): void {
    if (state === null || typeof state !== "object") throw new EngineError("invalid file source offset: expect an object");
    const s = state as { line?: unknown; seen?: unknown };
    if (this.isDir) {
      if (!Array.isArray(s.seen)) throw new EngineError("invalid file source offset: expect seen");
      this.seen.clear();
      for (const e of s.seen as unknown[]) if (Array.isArray(e) && typeof e[0] === "string" && typeof e[1] === "number") this.seen.set(e[0], e[1]);
      return;
    }
    const line = typeof s.line === "bigint" ? Number(s.line) : s.line;
    if (typeof line !== "number" || !Number.isInteger(line) || line < 0) throw new EngineError("invalid file source offset: expect line");
    this.skip = line;
  }

  private async runFile(ctx: SourceContext): Promise<void> {
    for (;;) {
      this.published = 0;
      if (existsSync(this.path)) await this.guarded(ctx, this.path);
      if (this.closed) return;
      if (this.interval <= 0) {
        ctx.eof();
        return;
      }
      await this.sleep(this.interval);
      if (this.closed) return;
    }
  }

  private async runDir(ctx: SourceContext): Promise<void> {
    if (this.interval <= 0) {
      // Watch before the first scan: a file created meanwhile is read by one or the other (seen dedups).
      this.watcher = watch(this.path, (_ev, name) => {
        if (name) this.settle(ctx, join(this.path, name.toString()));
      });
      this.watcher.on("error", (e) => ctx.exception(errorText(e)));
    }
    for (;;) {
      await this.enqueue(() => this.scan(ctx));
      if (this.closed || this.interval <= 0) return;
      await this.sleep(this.interval);
      if (this.closed) return;
    }
  }

  /** Reads the directory's new or modified files, oldest modification first. */
  private async scan(ctx: SourceContext): Promise<void> {
    const names = await readdir(this.path);
    const files: { path: string; mtime: number }[] = [];
    for (const n of names) {
      const f = join(this.path, n);
      const st = await stat(f).catch(() => undefined);
      if (!st || !st.isFile() || st.size === 0) continue;
      if (this.seen.get(f) === st.mtimeMs) continue;
      files.push({ path: f, mtime: st.mtimeMs });
    }
    files.sort((a, b) => a.mtime - b.mtime);
    for (const f of files) {
      if (this.closed) return;
      await this.readChanged(ctx, f.path);
    }
  }

  /** A watched file changed: read it once the events have settled. */
  private settle(ctx: SourceContext, file: string): void {
    if (this.closed) return;
    const t = setTimeout(() => {
      this.timers.delete(t);
      void this.enqueue(() => this.readChanged(ctx, file));
    }, SETTLE_MS);
    this.timers.add(t);
  }

  private async readChanged(ctx: SourceContext, file: string): Promise<void> {
    const st = await stat(file).catch(() => undefined);
    if (this.closed || !st || !st.isFile() || st.size === 0 || this.seen.get(file) === st.mtimeMs) return;
    this.seen.set(file, st.mtimeMs);
    await this.guarded(ctx, file);
  }

  /** Runs directory work one file at a time. */
  private enqueue(job: () => Promise<void>): Promise<void> {
    const next = this.chain.then(job).catch((e: unknown) => {
      if (!this.closed) throw e;
    });
    this.chain = next.catch(() => {});
    return next;
  }

  /** Reads one file; a failure is an exception of the source, which goes on with the next file. */
  private async guarded(ctx: SourceContext, file: string): Promise<void> {
    try {
      if (statSync(file).size === 0) return;
      const done = this.fileType === "json" ? await this.readJson(ctx, file) : await this.readText(ctx, file);
      if (done) await this.afterRead(file);
    } catch (e) {
      if (!this.closed) ctx.exception(errorText(e));
    }
  }

  private async afterRead(file: string): Promise<void> {
    if (this.action === 1) await unlink(file);
    else if (this.action === 2) {
      const to = join(this.moveTo, basename(file));
      await rename(file, to).catch(async (e: NodeJS.ErrnoException) => {
        if (e.code !== "EXDEV") throw e;
        await copyFile(file, to);
        await unlink(file);
      });
    }
  }

  /** True when the whole file was published (false: closed meanwhile). */
  private async readJson(ctx: SourceContext, file: string): Promise<boolean> {
    let bytes: Uint8Array = await Bun.file(file).bytes();
    if (this.decompression) bytes = decompressBytes(bytes, this.decompression);
    if (this.ignoreStart > 0 || this.ignoreEnd > 0) {
      const lines: Uint8Array[] = [];
      new LineWindow(this.ignoreStart, this.ignoreEnd).feed(utf8.decode(bytes).split("\n").map((l) => Buffer.from(l)), lines);
      bytes = Buffer.from(lines.map((l) => utf8.decode(l)).join("\n"));
    }
    const meta: Obj = { file };
    const parts = this.splitJson ? splitJsonArray(bytes) : isBlank(bytes, true) ? [] : [bytes];
    const msgs: SourceMessage[] = new Array<SourceMessage>(parts.length);
    for (let i = 0; i < parts.length; i++) msgs[i] = new SourceMessage(parts[i]!, null, meta);
    return this.emit(ctx, msgs);
  }

  private async readText(ctx: SourceContext, file: string): Promise<boolean> {
    const meta: Obj = { file };
    const window = new LineWindow(this.ignoreStart, this.ignoreEnd);
    const csv = this.fileType === "csv";
    let names: string[] | undefined = csv && !this.hasHeader ? this.columns : undefined;
    let needHeader = csv && this.hasHeader;
    let pending = "";
    const lines: Uint8Array[] = [];
    const msgs: SourceMessage[] = [];
    for await (const batch of readLines(file)) {
      lines.length = 0;
      window.feed(batch, lines);
      msgs.length = 0;
      for (let i = 0; i < lines.length; i++) {
        const line = lines[i]!;
        if (!csv) {
          if (!isBlank(line)) msgs.push(new SourceMessage(line, null, meta));
          continue;
        }
        const text = pending ? pending + "\n" + utf8.decode(line) : utf8.decode(line);
        if (!pending && text.trim() === "") continue;
        const rec = parseCsvRecord(text, this.delimiter);
        if (rec === null) {
          pending = text;
          continue;
        }
        pending = "";
        if (needHeader) {
          names = rec;
          needHeader = false;
          continue;
        }
        msgs.push(new SourceMessage(null, csvRow(rec, names), meta));
      }
      if (this.batched && csv && msgs.length > 1) {
        const rows = msgs.map((m) => m.rows as Obj);
        msgs.length = 0;
        msgs.push(new SourceMessage(null, rows, meta));
      }
      if (!(await this.emit(ctx, msgs))) return false;
    }
    if (needHeader) throw new EngineError("header not found");
    return true;
  }

  /** Publishes `msgs` in bus-sized batches (one by one with sendInterval); false when closed. */
  private async emit(ctx: SourceContext, msgs: SourceMessage[]): Promise<boolean> {
    const bus = ctx.bus;
    const step = this.sendInterval > 0 ? 1 : BATCH;
    let i = 0;
    if (this.skip > 0 && !this.isDir) {
      // Rewound: the messages before the saved position were consumed already.
      i = Math.min(this.skip, msgs.length);
      this.skip -= i;
      this.published += i;
    }
    for (; i < msgs.length; ) {
      if (this.closed) return false;
      const n = Math.min(msgs.length - i, bus.maxBatch, step);
      if (!bus.publish(msgs, i, i + n)) {
        await new Promise<void>((r) => bus.onDrain(r));
        continue;
      }
      i += n;
      this.published += n;
      if (this.sendInterval > 0) await this.sleep(this.sendInterval);
    }
    return !this.closed;
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((r) => {
      const t = setTimeout(() => {
        this.timers.delete(t);
        r();
      }, ms);
      this.timers.add(t);
    });
  }

  close(): void {
    this.closed = true;
    this.watcher?.close();
    // Pending sleeps never resolve: their loops see `closed` only if woken, and need not be.
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
  }
}

function isBlank(b: Uint8Array, newlines = false): boolean {
  for (let i = 0; i < b.length; i++) if (b[i] !== 0x20 && b[i] !== 0x09 && !(newlines && (b[i] === 0x0a || b[i] === 0x0d))) return false;
  return true;
}

/** A csv record keyed by the header or `columns`, else `cols0`, `cols1`, … **[quirk]**. */
function csvRow(rec: string[], names: string[] | undefined): Obj {
  const row: Obj = {};
  for (let i = 0; i < rec.length; i++) row[names?.[i] ?? `cols${i}`] = rec[i]!;
  return row;
}
