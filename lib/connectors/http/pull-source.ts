/**
 * The httppull source (rules-and-sinks.md §11.3, §8.2): pulls `url + DATASOURCE` at start and then
 * every `interval` (once when 0), admitting the response rows as one batch. A pull is not started
 * while the previous one is in flight or waits for the bus, so at most one response is held.
 * `states` are template fields of the request, updated from each response (pagination).
 * Failures are source exceptions; the rule keeps running.
 */
import { EngineError, errorText } from "../../errors.ts";
import type { Obj } from "../../value/values.ts";
import { HttpClient, parseHttpConf } from "./client.ts";
import type { NetGuard } from "../../net/guard.ts";
import type { Props } from "../../config/props.ts";
import { SourceMessage } from "../../source/message.ts";
import type { SourceConnector, SourceContext } from "../../source/connector.ts";

export interface HttpPullEnv {
  readonly baseDir: string;
  /** The owner's outbound client (`basic.enablePrivateNet`). */
  readonly outbound: NetGuard;
}

export class HttpPullSource implements SourceConnector {
  private readonly client: HttpClient;
  private states: Obj;
  /** The states before the last response, while that response may still wait in the bus. */
  private previous: Obj;
  private timer: ReturnType<typeof setInterval> | undefined;
  private busy = false;
  private closed = false;

  constructor(props: Props, env: HttpPullEnv) {
    this.client = new HttpClient(parseHttpConf(props, env.baseDir), env.outbound);
    this.states = { ...this.client.conf.states };
    this.previous = this.states;
  }

  /** `$$offset`: the `states` map after the last response the rule consumed. */
  offset(unconsumed: number): unknown {
    return { ...(unconsumed > 0 ? this.previous : this.states) };
  }

  rewind(state: unknown): void {
    if (state === null || typeof state !== "object" || Array.isArray(state)) throw new EngineError("invalid httppull offset: expect a states object");
    this.states = { ...(state as Obj) };
    this.previous = this.states;
  }

  async open(ctx: SourceContext): Promise<void> {
    await this.client.connect();
    ctx.status.connected();
    const interval = this.client.conf.intervalMs;
    void this.pull(ctx);
    if (interval > 0) this.timer = setInterval(() => void this.pull(ctx), interval);
  }

  private async pull(ctx: SourceContext): Promise<void> {
    if (this.busy || this.closed) return;
    this.busy = true;
    try {
      const rows = await this.client.fetchRows(this.states);
      if (rows === null || rows.length === 0 || this.closed) return;
      this.previous = { ...this.states };
      this.updateStates(rows);
      const bus = ctx.bus;
      const batch = [new SourceMessage(null, rows, null)];
      while (!bus.publish(batch)) {
        await new Promise<void>((r) => bus.onDrain(r));
        if (this.closed) return;
      }
    } catch (e) {
      if (!this.closed) ctx.exception(errorText(e));
    } finally {
      this.busy = false;
    }
  }

  /** Each state key found in the response takes the value of the last row holding it. */
  private updateStates(rows: Obj[]): void {
    for (const k of Object.keys(this.states)) {
      for (let i = rows.length - 1; i >= 0; i--) {
        const v = rows[i]![k];
        if (v !== undefined) {
          this.states[k] = v;
          break;
        }
      }
    }
  }

  close(): void {
    this.closed = true;
    if (this.timer) clearInterval(this.timer);
    this.client.close();
  }
}
