/**
 * Keeps a long run's resident memory flat. JSC grows its heap with the allocation rate, so RSS
 * keeps climbing for a while after the live set has stopped growing; on a gateway with a few
 * hundred MB that headroom is the budget. The governor reads RSS every `every` calls and runs a
 * full collection when RSS stands `headroom` bytes above the lowest RSS seen after the last one.
 */
export class MemoryGovernor {
  private floor = 0;
  private calls = 0;
  /** Full collections the governor ran. */
  collections = 0;

  constructor(
    private readonly headroom: number = (Number(process.env.FLOE_GC_HEADROOM_MB ?? 8)) * 1048576,
    private readonly every: number = 8,
  ) {}

  /** Call once per batch of work. */
  check(): void {
    if (++this.calls % this.every !== 0 || this.headroom <= 0) return;
    const rss = process.memoryUsage.rss();
    if (this.floor === 0 || rss < this.floor) this.floor = rss;
    else if (rss > this.floor + this.headroom) {
      Bun.gc(true);
      this.collections++;
      this.floor = process.memoryUsage.rss();
    }
  }
}

/** The process's governor: pipe mode checks it per input batch, the streaming runtime per inlet drain. */
export const memoryGovernor = new MemoryGovernor();
