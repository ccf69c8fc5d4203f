/**
 * The in-process pub/sub of the memory connector (rules-and-sinks.md §10): memory sinks publish
 * rows to topics, memory sources subscribe with MQTT-style filters (`+` one level, `#` the rest,
 * anchored — floe does not reproduce eKuiper's unanchored regex matching). Delivery pushes back:
 * a publish completes when every matching subscriber has admitted it, so a chain of rules keeps
 * the backpressure of a single rule (eKuiper drops the new message instead).
 */
import { EngineError } from "../../errors.ts";
import type { Obj } from "../../value/values.ts";

export type Rows = Obj | Obj[];

/**
 * How a memory sink with `rowkindField` marks its rows (eKuiper's updatable tuples): the field
 * holding the row kind and the key field. Memory lookup tables apply `delete` by that key.
 */
export interface RowKind {
  readonly rowkindField: string;
  readonly keyField: string;
}

interface Sub {
  readonly filter: string[];
  /** Tries to admit; false when refused (then `wait` is called with a retry). */
  readonly admit: (topic: string, rows: Rows, kind?: RowKind) => boolean;
  readonly wait: (retry: () => void) => void;
}

/** Validates a subscription filter: `#` only as the last level. */
export function checkFilter(topic: string): void {
  const parts = topic.split("/");
  const i = parts.indexOf("#");
  if (i >= 0 && i !== parts.length - 1) throw new EngineError(`invalid topic ${topic}: # must at the last level`);
}

/** Standard MQTT topic matching. */
export function topicMatches(filter: readonly string[], topic: string): boolean {
  const t = topic.split("/");
  for (let i = 0; i < filter.length; i++) {
    const f = filter[i]!;
    if (f === "#") return true;
    if (i >= t.length) return false;
    if (f !== "+" && f !== t[i]) return false;
  }
  return filter.length === t.length;
}

export class MemoryPubSub {
  private subs: Sub[] = [];

  /** Subscribes; returns the unsubscribe function. */
  subscribe(filter: string, admit: (topic: string, rows: Rows, kind?: RowKind) => boolean, wait: (retry: () => void) => void): () => void {
    checkFilter(filter);
    const s: Sub = { filter: filter.split("/"), admit, wait };
    this.subs.push(s);
    return () => {
      const i = this.subs.indexOf(s);
      if (i >= 0) this.subs.splice(i, 1);
    };
  }

  /**
   * Offers `rows` on `topic` to every matching subscriber.
   * Returns undefined when all admitted at once, else a promise for when the last one did.
   */
  publish(topic: string, rows: Rows, kind?: RowKind): Promise<void> | undefined {
    let waits: Promise<void>[] | undefined;
    for (const s of this.subs) {
      if (!topicMatches(s.filter, topic)) continue;
      if (s.admit(topic, rows, kind)) continue;
      (waits ??= []).push(
        new Promise<void>((resolve) => {
          const retry = (): void => {
            if (!this.subs.includes(s) || s.admit(topic, rows, kind)) resolve();
            else s.wait(retry);
          };
          s.wait(retry);
        }),
      );
    }
    return waits ? Promise.all(waits).then(() => undefined) : undefined;
  }
}
