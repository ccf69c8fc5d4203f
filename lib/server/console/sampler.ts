/**
 * The console's one sampler: once a second it reads the engine (process figures, every rule's
 * node counters) and turns the counters into rates; every console client receives the same
 * sample over SSE (events.ts), so a browser never polls rules itself. It keeps the last ten
 * minutes of totals for the overview's charts; a rule's errors come grouped from its nodes.
 */
import type { Topo } from "../lifecycle.ts";
import { loopLag } from "../../runtime/loop-lag.ts";
import type { Engine } from "../engine.ts";

export const HISTORY_POINTS = 600;

/** One point of the overview's charts: rates in records per second at `t` (ms); `in` counts each source once. */
export interface TotalsPoint {
  readonly t: number;
  readonly in: number;
  readonly out: number;
  readonly drop: number;
}

export interface SystemSample {
  readonly version: string;
  readonly upTimeSeconds: number;
  /** Percent of one core over the last interval. */
  readonly cpu: number;
  readonly rss: number;
  readonly heapUsed: number;
  /** Largest event-loop delay seen over the last interval, in ms. */
  readonly lagMs: number;
  readonly safeMode: boolean;
}

export interface RuleSample {
  readonly id: string;
  readonly state: string;
  readonly message: string;
  readonly in: number;
  readonly out: number;
  readonly errors: number;
  readonly inRate: number;
  readonly outRate: number;
  readonly dropRate: number;
}

export interface NodeSample {
  readonly kind: string;
  readonly name: string;
  readonly in: number;
  readonly out: number;
  readonly inRate: number;
  readonly outRate: number;
  readonly errors: number;
  readonly buffer: number;
  readonly latencyUs: number;
  readonly lastException: string;
  readonly lastExceptionTime: number;
}

/** One message of one node: how often, first and last time (ms), the last offending record (bounded). */
export interface RuleError {
  readonly node: string;
  readonly message: string;
  readonly count: number;
  readonly first: number;
  readonly last: number;
  readonly payload: string;
}

export interface RuleDetail {
  readonly id: string;
  readonly topo: Topo | null;
  readonly nodes: NodeSample[];
  readonly errors: RuleError[];
}

export interface Sample {
  readonly t: number;
  readonly system: SystemSample;
  readonly totals: TotalsPoint;
  readonly states: Record<string, number>;
  readonly rules: RuleSample[];
  /** How many sources `totals.in` counts (each stream once, however many rules read it). */
  readonly sources: number;
}

interface NodeCounts {
  readonly in: number;
  readonly out: number;
  readonly inRate: number;
  readonly outRate: number;
}

interface Prev {
  readonly at: number;
  /** Per node (`<kind>_<name>`): its counters and their rates at this sample. */
  readonly nodes: Map<string, NodeCounts>;
  in: number;
  out: number;
  errors: number;
}

function rate(now: number, before: number | undefined, dtS: number): number {
  // A restarted rule starts its counters again: no negative rates.
  if (before === undefined || now < before || dtS <= 0) return 0;
  return (now - before) / dtS;
}

export class Sampler {
  readonly history: TotalsPoint[] = [];
  private readonly prev = new Map<string, Prev>();
  private readonly listeners = new Set<(s: Sample) => void>();
  private lastCpu = process.cpuUsage();
  private lastAt = performance.now();
  private readonly timer: ReturnType<typeof setInterval>;
  last: Sample | undefined;

  constructor(private readonly engine: Engine, intervalMs = 1000) {
    this.timer = setInterval(() => this.tick(), intervalMs);
    this.timer.unref();
    this.tick();
  }

  /** Calls `fn` with every sample until the returned function is called. */
  subscribe(fn: (s: Sample) => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  close(): void {
    clearInterval(this.timer);
    this.listeners.clear();
  }

  /** Takes one sample now and hands it to every subscriber. */
  tick(): Sample {
    const s = this.sample();
    this.last = s;
    this.history.push(s.totals);
    if (this.history.length > HISTORY_POINTS) this.history.splice(0, this.history.length - HISTORY_POINTS);
    for (const fn of this.listeners) fn(s);
    return s;
  }

  private system(): SystemSample {
    const e = this.engine;
    const now = performance.now();
    const cur = process.cpuUsage();
    const wall = now - this.lastAt;
    // The first sample (taken as the sampler starts) has no interval to measure yet.
    const cpu = wall >= 100 ? ((cur.user - this.lastCpu.user + cur.system - this.lastCpu.system) / 1000 / wall) * 100 : 0;
    this.lastCpu = cur;
    this.lastAt = now;
    // The daemon's probe (runtime/loop-lag.ts): the largest lag of the last minute.
    const lag = loopLag.stats().maxMs;
    const mem = process.memoryUsage();
    return { version: e.version, upTimeSeconds: Math.floor((Date.now() - e.startedAt) / 1000), cpu, rss: mem.rss, heapUsed: mem.heapUsed, lagMs: lag, safeMode: e.safeMode.on };
  }

  private sample(): Sample {
    const t = Date.now();
    const states: Record<string, number> = {};
    const rules: RuleSample[] = [];
    // In counts each source once: rules reading one stream each count its records (or share one node).
    const perSource = new Map<string, number>();
    let tout = 0;
    let tdrop = 0;
    const alive = new Set<string>();
    for (const r of this.engine.rules.list()) {
      const id = String(r.id);
      alive.add(id);
      const lc = this.engine.rules.get(id);
      const state = lc ? lc.state : String(r.status);
      states[state] = (states[state] ?? 0) + 1;
      let rin = 0;
      let rout = 0;
      let rerr = 0;
      const nodes = new Map<string, NodeCounts>();
      const p = this.prev.get(id);
      const dt = p ? (t - p.at) / 1000 : 0;
      if (lc) {
        for (const n of lc.nodes()) {
          if (n.kind === "source") rin += n.recordsIn;
          else if (n.kind === "sink") rout += n.recordsOut;
          rerr += n.exceptions;
          const key = `${n.kind}_${n.name}`;
          const b = p?.nodes.get(key);
          const c = { in: n.recordsIn, out: n.recordsOut, inRate: rate(n.recordsIn, b?.in, dt), outRate: rate(n.recordsOut, b?.out, dt) };
          nodes.set(key, c);
          if (n.kind === "source") perSource.set(n.name, Math.max(perSource.get(n.name) ?? 0, c.inRate));
        }
      }
      const inRate = rate(rin, p?.in, dt);
      const outRate = rate(rout, p?.out, dt);
      const dropRate = rate(rerr, p?.errors, dt);
      tout += outRate;
      tdrop += dropRate;
      this.prev.set(id, { at: t, nodes, in: rin, out: rout, errors: rerr });
      rules.push({ id, state, message: lc?.message ?? "", in: rin, out: rout, errors: rerr, inRate, outRate, dropRate });
    }
    for (const id of this.prev.keys()) {
      if (!alive.has(id)) this.prev.delete(id);
    }
    let tin = 0;
    for (const r of perSource.values()) tin += r;
    return { t, system: this.system(), totals: { t, in: tin, out: tout, drop: tdrop }, states, rules, sources: perSource.size };
  }

  /** A rule's topology with per-node counters and rates since the last sample; undefined when unknown. */
  detail(id: string): RuleDetail | undefined {
    const lc = this.engine.rules.get(id);
    if (!lc) return undefined;
    const p = this.prev.get(id);
    const nodes: NodeSample[] = [];
    const errors: RuleError[] = [];
    for (const n of lc.nodes()) {
      for (const g of n.errorGroups?.list() ?? []) errors.push({ node: `${n.kind}_${n.name}`, ...g });
      // Rates of the last sample (the same window as the rule list's).
      const r = p?.nodes.get(`${n.kind}_${n.name}`);
      nodes.push({
        kind: n.kind,
        name: n.name,
        in: n.recordsIn,
        out: n.recordsOut,
        inRate: r?.inRate ?? 0,
        outRate: r?.outRate ?? 0,
        errors: n.exceptions,
        buffer: n.bufferLength,
        latencyUs: n.processLatencyUs,
        lastException: n.lastException,
        lastExceptionTime: n.lastExceptionTime,
      });
    }
    errors.sort((a, b) => b.last - a.last);
    return { id, topo: lc.lastTopo ?? null, nodes, errors };
  }
}
