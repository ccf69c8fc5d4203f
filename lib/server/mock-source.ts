/**
 * The simulator that replaces a stream's connector in a trial run (`mockSource`, rest-api.md §8):
 * `data` rows one by one every `interval` (ms or a Go duration), repeated with `loop`, else EOF.
 */
import { goDurationMs } from "../expr/duration.ts";
import { decodeTupleJson } from "../io/formats/json-tuple.ts";
import type { Obj } from "../expr/values.ts";
import { SourceMessage } from "../io/sources/message.ts";
import type { SourceConnector, SourceContext } from "../io/sources/source.ts";

export interface MockSpec {
  readonly data?: unknown;
  readonly interval?: unknown;
  readonly loop?: unknown;
}

function intervalMs(v: unknown): number {
  if (typeof v === "number" && v >= 0) return v;
  if (typeof v === "string") {
    try {
      return goDurationMs(v);
    } catch {
      return 1000;
    }
  }
  return 1000;
}

export class MockSource implements SourceConnector {
  private readonly rows: Obj[];
  private readonly interval: number;
  private readonly loop: boolean;
  private timer: ReturnType<typeof setTimeout> | undefined;

  constructor(spec: MockSpec) {
    // Rows go through the int/float-preserving JSON reader, as pipe-mode input does.
    this.rows = Array.isArray(spec.data) ? spec.data.map((r) => decodeTupleJson(JSON.stringify(r), null) as Obj) : [];
    this.interval = intervalMs(spec.interval);
    this.loop = spec.loop === true;
  }

  open(ctx: SourceContext): void {
    ctx.status.connected();
    let i = 0;
    const next = () => {
      if (i >= this.rows.length) {
        if (!this.loop || this.rows.length === 0) {
          ctx.eof();
          return;
        }
        i = 0;
      }
      ctx.bus.publish([new SourceMessage(null, this.rows[i++]!, null)]);
      this.timer = setTimeout(next, this.interval);
    };
    this.timer = setTimeout(next, this.interval);
  }

  close(): void {
    if (this.timer) clearTimeout(this.timer);
  }
}
