/**
 * One MQTT connection shared by several nodes (a named connection, rules-and-sinks.md §9): sinks
 * publish through its client; sources subscribe their topic filters and get the publishes that
 * match them. The connection's read path hands each read's publishes to a router that checks
 * every interested source's bus first and admits to all or to none (the bus's reserve-then-commit
 * across rules), so one slow rule pauses the shared socket — the price of sharing one TCP
 * connection. Broker subscriptions are reference-counted per filter: a filter is unsubscribed when
 * the last source using it leaves.
 *
 * eKuiper keeps only the latest handler when two rules subscribe the same topic on one connection
 * (its docs point to shared streams instead); floe delivers to both.
 */
import type { Level } from "../../log.ts";
import type { ConnectionReporter } from "../../core/connection.ts";
import { MqttConnection, type PublishHandler, type ReaderKind } from "./client.ts";
import type { MqttConf } from "./conf.ts";
import type { Publish } from "./frames.ts";

/** An MQTT topic filter compiled for matching without splitting every topic. */
export class TopicFilter {
  readonly text: string;
  private readonly levels: string[];
  constructor(filter: string) {
    this.text = filter;
    // `$share/<group>/<filter>`: the broker delivers publishes on <filter>.
    const shared = /^\$share\/[^/]+\/(.*)$/.exec(filter);
    this.levels = (shared ? shared[1]! : filter).split("/");
  }

  matches(topic: string): boolean {
    const lv = this.levels;
    // Wildcards at the first level do not match `$SYS`-style topics (MQTT 4.7.2).
    if (topic.charCodeAt(0) === 36 && (lv[0] === "+" || lv[0] === "#")) return false;
    let pos = 0;
    for (let i = 0; i < lv.length; i++) {
      const f = lv[i]!;
      if (f === "#") return true;
      if (pos > topic.length) return false;
      let end = topic.indexOf("/", pos);
      if (end < 0) end = topic.length;
      if (f !== "+" && (end - pos !== f.length || !topic.startsWith(f, pos))) return false;
      pos = end + 1;
    }
    return pos === topic.length + 1;
  }
}

/** A source's handler on a shared connection: it admits only the publishes its filters match. */
export interface RouteHandler {
  /** True when the publishes of `pubs[from..to)` this route takes fit now (else it waits for room). */
  fits(pubs: readonly Publish[], from: number, to: number): boolean;
  /** Admits the matching publishes of the range; called only after every route's `fits`. */
  admit(pubs: readonly Publish[], from: number, to: number): void;
  /** Calls `fn` once when a refused batch may fit. */
  onDrain(fn: () => void): void;
  readonly maxBatch: number;
  /** Whether this route takes `topic`. */
  matches(topic: string): boolean;
  duplicates?(n: number): void;
}

class Router implements PublishHandler {
  routes: RouteHandler[] = [];

  get maxBatch(): number {
    let m = Infinity;
    for (const r of this.routes) if (r.maxBatch < m) m = r.maxBatch;
    return m;
  }

  admit(pubs: readonly Publish[], from: number, to: number): boolean {
    const routes = this.routes;
    for (let i = 0; i < routes.length; i++) {
      const r = routes[i]!;
      if (!r.fits(pubs, from, to)) {
        this.refused = r;
        return false;
      }
    }
    for (let i = 0; i < routes.length; i++) {
      const r = routes[i]!;
      r.admit(pubs, from, to);
      if (r.duplicates) {
        let dups = 0;
        for (let j = from; j < to; j++) if (pubs[j]!.dup && r.matches(pubs[j]!.topic)) dups++;
        if (dups) r.duplicates(dups);
      }
    }
    return true;
  }

  private refused: RouteHandler | undefined;

  onDrain(fn: () => void): void {
    const r = this.refused;
    this.refused = undefined;
    // The refusing route may have left meanwhile: then retry at once.
    if (r && this.routes.includes(r)) r.onDrain(fn);
    else queueMicrotask(fn);
  }
}

export class SharedMqtt {
  readonly conn: MqttConnection;
  private readonly router = new Router();
  /** Broker subscriptions: filter → number of routes using it. */
  private readonly filters = new Map<string, number>();

  constructor(conf: MqttConf, log: (line: string, level?: Level) => void, reader?: ReaderKind) {
    this.conn = new MqttConnection({ conf, handler: this.router, reader, log });
  }

  get status(): ConnectionReporter {
    return this.conn.status;
  }

  /** Routes the publishes matching `topics` to `route` and subscribes the new filters at the broker. */
  async subscribe(topics: string[], qos: 0 | 1 | 2, route: RouteHandler): Promise<void> {
    this.router.routes = [...this.router.routes, route];
    const fresh: string[] = [];
    for (const t of topics) {
      const n = this.filters.get(t) ?? 0;
      this.filters.set(t, n + 1);
      if (n === 0) fresh.push(t);
    }
    if (fresh.length) await this.conn.subscribe(fresh, qos);
  }

  /** Stops routing to `route`; filters no other route uses are unsubscribed (not awaited). */
  unsubscribe(topics: string[], route: RouteHandler): void {
    this.router.routes = this.router.routes.filter((r) => r !== route);
    const gone: string[] = [];
    for (const t of topics) {
      const n = (this.filters.get(t) ?? 1) - 1;
      if (n > 0) this.filters.set(t, n);
      else {
        this.filters.delete(t);
        gone.push(t);
      }
    }
    if (gone.length) this.conn.client.unsubscribeAsync(gone).catch(() => undefined);
  }

  close(): Promise<void> {
    return this.conn.close();
  }
}
