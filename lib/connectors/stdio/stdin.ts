/**
 * Pipe mode's standard-input source (pipe-mode.md §Input, without --replay): each JSON line is one
 * record of the stdin stream, admitted in batches with backpressure; end of input is EOF.
 */
import { errorText } from "../../errors.ts";
import { isObj, type Obj } from "../../value/values.ts";
import { decodeTupleJson } from "../../formats/json-tuple.ts";
import { SourceMessage } from "../../source/message.ts";
import type { SourceConnector, SourceContext } from "../../source/connector.ts";

/** A stdin record with its input line number (pipe mode reports row errors by line). */
export class LineMessage extends SourceMessage {
  readonly line: number;
  constructor(rows: Obj | Obj[], line: number) {
    super(null, rows, null);
    this.line = line;
  }
}

export class StdinSource implements SourceConnector {
  private closed = false;
  /** Lines that were not JSON objects. */
  errors = 0;

  constructor(
    private readonly input: AsyncIterable<string[]>,
    private readonly warn: (line: number, message: string) => void,
  ) {}

  open(ctx: SourceContext): void {
    ctx.status.connected();
    // An input that cannot be read to its end stops the rule by error (it is not an end of input).
    this.pump(ctx).catch((e: unknown) => {
      if (!this.closed) ctx.fail(e);
    });
  }

  private async pump(ctx: SourceContext): Promise<void> {
    const bus = ctx.bus;
    let no = 0;
    for await (const batch of this.input) {
      const msgs: SourceMessage[] = [];
      for (const line of batch) {
        no++;
        if (!line.trim()) continue;
        let v;
        try {
          v = decodeTupleJson(line);
          if (!isObj(v) && !(Array.isArray(v) && v.every((x) => isObj(x)))) throw new Error("only map[string]interface{} and []map[string]interface{} is supported");
        } catch (e) {
          this.errors++;
          this.warn(no, errorText(e));
          ctx.exception(errorText(e));
          continue;
        }
        msgs.push(new LineMessage(v as Obj | Obj[], no));
      }
      for (let i = 0; i < msgs.length; ) {
        if (this.closed) return;
        const n = Math.min(msgs.length - i, bus.maxBatch, 1024);
        if (bus.publish(msgs, i, i + n)) i += n;
        else await new Promise<void>((r) => bus.onDrain(r));
      }
      if (this.closed) return;
    }
    ctx.eof();
  }

  close(): void {
    this.closed = true;
  }
}
