/**
 * The simulator source (rules-and-sinks.md §11.10), also the `mockSource` of trial runs
 * (rest-api.md §8): one `data` row per pull, pulled at start and then every `interval` (ms or a Go
 * duration; 0 → only the first row). With `loop` it restarts after the last row, else it ends
 * with EOF. A refused row is offered again when the bus drains; ticks meanwhile are skipped.
 */
import { EngineError } from "../../errors.ts";
import type { Obj } from "../../value/values.ts";
import { decodeTupleJson } from "../../formats/json-tuple.ts";
import { PropReader, type Props } from "../../config/props.ts";
import { SourceMessage } from "../../source/message.ts";
import type { SourceConnector, SourceContext } from "../../source/connector.ts";

/** The properties of a simulator (a trial run's `mockSource` entry). */
export type MockSpec = { readonly data?: unknown; readonly interval?: unknown; readonly loop?: unknown };

export class SimulatorSource implements SourceConnector {
  private readonly rows: Obj[];
  private readonly interval: number;
  private readonly loop: boolean;
  private timer: ReturnType<typeof setInterval> | undefined;
  private waiting = false;
  private closed = false;
  private i = 0;

  constructor(props: Props) {
    const r = new PropReader(props);
    const data = r.raw("data") ?? [];
    if (!Array.isArray(data) || !data.every((x) => x !== null && typeof x === "object" && !Array.isArray(x)))
      throw new EngineError("data must be an array of objects");
    // Rows go through the int/float-preserving JSON reader, as pipe-mode input does.
    this.rows = data.map((x) => decodeTupleJson(JSON.stringify(x), null) as Obj);
    this.interval = r.duration("interval", 1000);
    if (this.interval < 0) throw new EngineError("interval must be greater than or equal to 0");
    this.loop = r.bool("loop");
  }

  open(ctx: SourceContext): void {
    ctx.status.connected();
    if (this.rows.length === 0) {
      ctx.eof();
      return;
    }
    this.pull(ctx);
    if (this.interval > 0 && !this.closed) this.timer = setInterval(() => this.pull(ctx), this.interval);
  }

  private pull(ctx: SourceContext): void {
    if (this.waiting || this.closed) return;
    const bus = ctx.bus;
    if (!bus.publish([new SourceMessage(null, { ...this.rows[this.i]! }, null)])) {
      this.waiting = true;
      bus.onDrain(() => {
        this.waiting = false;
        this.pull(ctx);
      });
      return;
    }
    if (++this.i < this.rows.length) return;
    if (this.loop) this.i = 0;
    else {
      this.close();
      ctx.eof();
    }
  }

  close(): void {
    this.closed = true;
    if (this.timer) clearInterval(this.timer);
  }
}
