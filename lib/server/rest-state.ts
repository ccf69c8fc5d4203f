/**
 * The REST layer's run-time state, held by the Engine (one daemon, one set): trial runs, the
 * controllers of async data-import tasks, and the CPU sample `GET /` compares against.
 */
import type { SseHub } from "../connectors/http/server.ts";
import type { MockSpec } from "../connectors/simulator/source.ts";
import type { HeldRun } from "./lifecycle.ts";

export interface Trial {
  readonly id: string;
  readonly text: string;
  readonly mocks: Record<string, MockSpec>;
  /** The trial's SSE endpoint `/test/<id>` on the data server. */
  readonly hub: SseHub;
  readonly release: () => void;
  run: HeldRun | undefined;
  timer: ReturnType<typeof setTimeout> | undefined;
}

/** Trial runs by id (rest-api.md §8, server/ruletest.ts). */
export class Trials {
  private readonly byId = new Map<string, Trial>();

  get(id: string): Trial | undefined {
    return this.byId.get(id);
  }

  set(t: Trial): void {
    this.byId.set(t.id, t);
  }

  /** Sends one sink output to every SSE client of trial `id` (the trial's sink calls this). */
  publish(id: string, payload: string): void {
    this.byId.get(id)?.hub.publish(payload);
  }

  async stop(id: string): Promise<void> {
    const t = this.byId.get(id);
    if (!t) return;
    this.byId.delete(id);
    if (t.timer) clearTimeout(t.timer);
    await t.run?.stop().catch(() => {});
    t.release();
  }

  /** Stops every trial (daemon shutdown; the engine then closes the data server). */
  async close(): Promise<void> {
    for (const id of [...this.byId.keys()]) await this.stop(id);
  }
}

/** The process's CPU use since the previous reading, as eKuiper's `cpuUsage` text. */
export class CpuMeter {
  private last = process.cpuUsage();
  private lastAt = performance.now();

  percent(): string {
    const now = performance.now();
    const cur = process.cpuUsage();
    const used = (cur.user - this.last.user + cur.system - this.last.system) / 1000;
    const wall = now - this.lastAt;
    this.last = cur;
    this.lastAt = now;
    return `${(wall > 0 ? (used / wall) * 100 : 0).toFixed(2)}%`;
  }
}
