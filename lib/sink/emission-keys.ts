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

export class EmissionKeys {
  private epoch = randomEpoch();
  private made = 0;

  constructor(private readonly sink: string) {}

  next(): string {
    return `${this.sink}:${this.epoch}-${++this.made}`;
  }

  /** For the checkpoint; `reserve` keys are counted as made (outputs waiting for their batch take one). */
  snapshot(reserve: number): { epoch: string; made: number } {
    return { epoch: this.epoch, made: this.made + reserve };
  }

  restore(s: unknown): void {
    const st = s as { epoch?: unknown; made?: unknown };
    if (typeof st.epoch !== "string" || typeof st.made !== "number") return;
    this.epoch = st.epoch;
    this.made = st.made;
  }

  /** A stateful run with checkpoints that found none: keys start from the rule's fingerprint. */
  startFrom(fingerprint: string): void {
    this.epoch = fingerprint;
    this.made = 0;
  }

  /** This run's emissions are not replays: a new random epoch. */
  fresh(): void {
    this.epoch = randomEpoch();
  }
}
