/**
 * The pipe-mode sink: results as JSON lines on standard output (pipe-mode.md §Output), one object
 * per row (`rows`) or one array per emission (`array`). Output is gathered and written in chunks.
 */
import { RowError } from "../../errors.ts";
import type { Obj } from "../../value/values.ts";
import { Emission, type Item } from "../../core/item.ts";
import { NodeMetrics } from "../../core/metrics.ts";
import type { SinkNode } from "../../core/sink.ts";
import { encodeGoJson } from "../../value/json-encode.ts";

export type EmitMode = "rows" | "array";

/**
 * Standard output with backpressure: every chunk is flushed at once, and while the reader lags
 * (the pipe is full) `drain` gives the promise of the pending write, so the run waits instead of
 * buffering without bound.
 */
export class OutputWriter {
  private pending: Promise<void> | undefined;
  /** True once the reader went away (EPIPE): later writes are dropped, `closed` has resolved. */
  broken = false;
  private onClose!: () => void;
  /** Resolves when the reader of standard output goes away (`floe run … | head`). */
  readonly closed = new Promise<void>((r) => (this.onClose = r));
  constructor(private readonly out = Bun.stdout.writer()) {}

  private fail(e: unknown): void {
    if ((e as { code?: unknown } | null)?.code !== "EPIPE") throw e;
    this.broken = true;
    this.pending = undefined;
    this.onClose();
  }

  readonly write = (text: string): void => {
    if (this.broken) return;
    let r: number | Promise<number>;
    try {
      this.out.write(text);
      r = this.out.flush();
    } catch (e) {
      return this.fail(e);
    }
    if (r instanceof Promise) {
      const p: Promise<void> = r.then(
        () => {
          if (this.pending === p) this.pending = undefined;
        },
        (e: unknown) => this.fail(e),
      );
      this.pending = p;
    }
  };

  /** The pending write while the reader lags, else undefined. */
  readonly drain = (): Promise<void> | undefined => this.pending;

  async end(): Promise<void> {
    if (this.broken) return;
    try {
      await this.out.flush();
    } catch (e) {
      this.fail(e);
    }
  }
}

export class StdoutSink implements SinkNode {
  readonly metrics: NodeMetrics[];
  private readonly sink: NodeMetrics;
  private readonly transform: NodeMetrics;
  private readonly encode: NodeMetrics;
  /** Encoded lines gathered for the next write, and their length with newlines (UTF-16 units). */
  private readonly lines: string[] = [];
  private size = 0;

  constructor(
    private readonly mode: EmitMode,
    private readonly write: (text: string) => void,
    private readonly now: () => number,
    index = 0,
  ) {
    this.transform = new NodeMetrics("op", `stdout_${index}_0_transform`);
    this.encode = new NodeMetrics("op", `stdout_${index}_1_encode`);
    this.sink = new NodeMetrics("sink", `stdout_${index}`);
    this.sink.connectionStatus = 1;
    this.metrics = [this.transform, this.encode, this.sink];
  }

  push(item: Item): void {
    let rows: Obj[] | null = null;
    let one: Obj | null = null;
    if (item instanceof Emission) {
      // A one-row emission in `rows` mode is encoded without its list.
      one = this.mode === "rows" ? item.row : null;
      if (one === null) rows = item.rows;
    } else if (item instanceof RowError) rows = [{ error: item.message }];
    else return;
    const now = this.now();
    const { transform, encode, sink } = this;
    transform.recordsIn++;
    transform.lastInvocation = now;
    encode.recordsIn++;
    encode.lastInvocation = now;
    sink.recordsIn++;
    sink.lastInvocation = now;
    const lines = this.lines;
    const at = lines.length;
    try {
      if (one !== null) lines.push(encodeGoJson(one));
      else if (this.mode === "array") lines.push(encodeGoJson(rows));
      else for (let i = 0; i < rows!.length; i++) lines.push(encodeGoJson(rows![i]!));
    } catch (e) {
      if (!(e instanceof RowError)) throw e;
      // An emission is written whole or not at all.
      lines.length = at;
      encode.exception(e.message, now);
      return;
    }
    for (let i = at; i < lines.length; i++) this.size += lines[i]!.length + 1;
    transform.recordsOut++;
    encode.recordsOut++;
    sink.recordsOut++;
    sink.messagesProcessed += one !== null ? 1 : rows!.length;
    if (this.size > 65536) this.flush();
  }

  /** Hands gathered output to the writer. */
  flush(): void {
    const lines = this.lines;
    if (lines.length) {
      // One join per chunk: no intermediate string per row.
      lines.push("");
      this.write(lines.join("\n"));
      lines.length = 0;
      this.size = 0;
    }
  }

  end(): void {
    this.flush();
  }

  /** Emissions that could not be written (encoding failures). */
  lost(): number {
    return this.encode.exceptions;
  }
}
