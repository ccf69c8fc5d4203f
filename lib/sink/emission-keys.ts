/**
 * The emission keys of a keyed connector's items (SinkItem.key; the JetStream sink's default
 * `Nats-Msg-Id`): `<sink>:<epoch>-<n>`, n the items the pipeline has made. Both the epoch and n are
 * in the rule's checkpoint, so a run restored from one makes the keys of the items it replays
 * again; a fresh run draws a random epoch and never reuses a key. A stateful run with checkpoints
 * that starts without one takes the rule's fingerprint as its epoch: it replays what no checkpoint
 * acknowledged, as a run that died before its first checkpoint made it. Both hold only when the
 * rule's sources replay (Execution.releaseDrains, runtime/execution.ts); otherwise the run draws a fresh epoch.
 */
function randomEpoch(): string {
  return Buffer.from(crypto.getRandomValues(new Uint8Array(6))).toString("hex");
}

/** A checkpoint's keys (`snapshot`): the epoch, and the keys the results it covers made. */
interface Snapshot {
  readonly epoch: string;
  made: number;
}

export class EmissionKeys {
  private epoch = randomEpoch();
  private made = 0;
  /** The last snapshot, while the results it covers still make keys; null after. */
  private counting: Snapshot | null = null;
  /** The last result `counting` covers (its pipeline's `given` then). */
  private countingTo = 0;

  constructor(private readonly sink: string) {}

  /** The key of the next item, made of result `tag` (SinkItem.tag): items are made in order of their results. */
  next(tag: number): string {
    const c = this.counting;
    if (c !== null) {
      if (tag > this.countingTo) this.counting = null;
      else c.made++;
    }
    return `${this.sink}:${this.epoch}-${++this.made}`;
  }

  /**
   * For a checkpoint covering results 1…`given`. Some may make their items later (a backlog
   * sliced across turns, outputs waiting for their batch, whose batch then takes the result's
   * tag): the count goes on as they do, up to the first key of a later result. The checkpoint
   * reads it once its barrier passed (runtime/checkpoint.ts), when every one of them has.
   */
  snapshot(given: number): Snapshot {
    const s: Snapshot = { epoch: this.epoch, made: this.made };
    this.counting = s;
    this.countingTo = given;
    return s;
  }

  restore(s: unknown): void {
    const st = s as { epoch?: unknown; made?: unknown };
    if (typeof st.epoch !== "string" || typeof st.made !== "number") return;
    this.epoch = st.epoch;
    this.made = st.made;
    this.counting = null;
  }

  /** A stateful run with checkpoints that found none: keys start from the rule's fingerprint. */
  startFrom(fingerprint: string): void {
    this.epoch = fingerprint;
    this.made = 0;
    this.counting = null;
  }

  /** This run's emissions are not replays: a new random epoch. */
  fresh(): void {
    this.epoch = randomEpoch();
    this.counting = null;
  }
}
