/** The small sinks: `nop` (discard; `log: true` logs), `log` (eKuiper's log line), `logToMemory`, `stdout` (payload lines). */
import { PropReader, type Props } from "../../config/props.ts";
import type { SinkConnector, SinkContext, SinkItem } from "../../sink/connector.ts";

function text(p: SinkItem["payload"]): string {
  return typeof p === "string" ? p : p instanceof Uint8Array ? new TextDecoder().decode(p) : JSON.stringify(p);
}

export class NopSink implements SinkConnector {
  readonly bytes = true;
  readonly direct = true;
  private readonly log: boolean;
  private ctx: SinkContext | undefined;
  constructor(props: Props) {
    // A non-boolean `log` panics in eKuiper [quirk]; floe reads it as false.
    const v = new PropReader(props).raw("log");
    this.log = v === true;
  }
  open(ctx: SinkContext): void {
    // [quirk] nop never reports a connection state: connection_status stays 0.
    // Only a logging nop needs its context (many idle rules hold a nop each).
    if (this.log) this.ctx = ctx;
  }
  send(item: SinkItem): void {
    if (this.log) this.ctx!.log(`sink result for rule ${this.ctx!.ruleId}: ${text(item.payload)}`);
  }
  close(): void {}
}

export class LogSink implements SinkConnector {
  readonly bytes = true;
  readonly direct = true;
  protected ctx: SinkContext | undefined;
  open(ctx: SinkContext): void {
    this.ctx = ctx;
    ctx.status.connected();
  }
  send(item: SinkItem): void {
    this.ctx!.log(`sink result for rule ${this.ctx!.ruleId}: ${text(item.payload)}`);
  }
  close(): void {}
}

/** Payloads as lines on standard output (results only: logs go to stderr). */
export class StdoutConnector implements SinkConnector {
  readonly bytes = true;
  private buf = "";
  private timer: ReturnType<typeof setTimeout> | undefined;
  constructor(private readonly write: (s: string) => void = (s) => void process.stdout.write(s)) {}
  open(ctx: SinkContext): void {
    ctx.status.connected();
  }
  send(item: SinkItem): void {
    this.buf += text(item.payload) + "\n";
    // Gather a tick's output and write once.
    this.timer ??= setTimeout(() => this.flush(), 0);
    if (this.buf.length > 65536) this.flush();
  }
  private flush(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.buf) this.write(this.buf);
    this.buf = "";
  }
  close(): void {
    this.flush();
  }
}

/** Results kept per rule by `logToMemory` sinks, at most this many (the oldest go first). */
const MEMORY_LOG_CAP = 1024;
const memoryLogs = new Map<string, string[]>();

/** Takes (and clears) the payloads `logToMemory` sinks of rule `ruleId` kept. */
export function takeMemoryLog(ruleId: string): string[] {
  const got = memoryLogs.get(ruleId) ?? [];
  memoryLogs.delete(ruleId);
  return got;
}

/** `logToMemory` (rules-and-sinks.md §11.8): logs like `log` and keeps the payloads for `query`. */
export class LogToMemorySink extends LogSink {
  override send(item: SinkItem): void {
    super.send(item);
    const ruleId = this.ctx!.ruleId;
    let buf = memoryLogs.get(ruleId);
    if (!buf) memoryLogs.set(ruleId, (buf = []));
    // Bounded: drop the oldest half at once rather than shifting per payload.
    if (buf.length >= MEMORY_LOG_CAP) buf.splice(0, MEMORY_LOG_CAP / 2);
    buf.push(text(item.payload));
  }
}
