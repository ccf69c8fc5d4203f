/**
 * What a member refused of what it read from the group's buckets (definitions, checkpoints,
 * heartbeats without a valid signature or content; writes of a stale owner): counted for GET
 * /cluster and /metrics, and logged — at most once a minute per key and reason, so a writer that keeps
 * trying does not flood the log.
 */
const LOG_EVERY_MS = 60_000;

export class RefusalLog {
  count = 0;
  last: { key: string; reason: string; at: number } | undefined;
  private readonly logged = new Map<string, number>();

  constructor(private readonly log: (line: string) => void) {}

  refuse(key: string, reason: string): void {
    const now = Date.now();
    this.count++;
    this.last = { key, reason, at: now };
    const what = `${key}\u0000${reason}`;
    if (now - (this.logged.get(what) ?? -Infinity) < LOG_EVERY_MS) return;
    if (this.logged.size > 1000) this.logged.clear();
    this.logged.set(what, now);
    this.log(`cluster: refused the group entry ${key}: ${reason}`);
  }

  view(): { count: number; last: { key: string; reason: string; at: number } | undefined } {
    return { count: this.count, last: this.last };
  }
}
