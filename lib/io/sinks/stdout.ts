/**
 * The pipe-mode sink: results as JSON lines on standard output (pipe-mode.md §Output), one object
 * per row (`rows`) or one array per emission (`array`). Output is gathered and written in chunks.
 */
import { RowError } from "../../errors.ts";
import type { Obj } from "../../expr/values.ts";
import { Emission, type Item } from "../../runtime/item.ts";
import { NodeMetrics } from "../../runtime/metrics.ts";
import type { SinkNode } from "../../runtime/topology.ts";
import { encodeGoJson } from "../formats/json-encode.ts";

export type EmitMode = "rows" | "array";

export class StdoutSink implements SinkNode {
  readonly metrics: NodeMetrics[];
  private readonly sink: NodeMetrics;
  private readonly transform: NodeMetrics;
  private readonly encode: NodeMetrics;
  private chunk = "";

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
    let rows: Obj[];
    if (item instanceof Emission) rows = item.rows;
    else if (item instanceof RowError) rows = [{ error: item.message }];
    else return;
    const now = this.now();
    for (const m of this.metrics) {
      m.recordsIn++;
      m.lastInvocation = now;
    }
    let text: string;
    try {
      if (this.mode === "array") text = encodeGoJson(rows) + "\n";
      else {
        text = "";
        for (const r of rows) text += encodeGoJson(r) + "\n";
      }
    } catch (e) {
      if (!(e instanceof RowError)) throw e;
      this.encode.exception(e.message, now);
      return;
    }
    this.transform.recordsOut++;
    this.encode.recordsOut++;
    this.sink.recordsOut++;
    this.sink.messagesProcessed += rows.length;
    this.chunk += text;
    if (this.chunk.length > 65536) this.flush();
  }

  /** Hands gathered output to the writer. */
  flush(): void {
    if (this.chunk) {
      this.write(this.chunk);
      this.chunk = "";
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
