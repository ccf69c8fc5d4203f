/**
 * The source acknowledgements of an execution and their ledger (docs/sinks.md): what each source
 * admitted (acknowledged) and what of it is durable — in the sink caches, or, for a stateful rule,
 * in a stored checkpoint. The ledger is kept when every sink is journaled (cache on, no alter
 * queue) and the rule's state is either nothing or covered by checkpoints (qos ≥ 1); what the last
 * run admitted and left undurable is counted as lost at the next start.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import type { SinkPipeline } from "../sink/pipeline.ts";
import { AckLedger, cacheDb } from "../store/sink-cache.ts";
import type { Drain } from "./drain.ts";
import type { Topology } from "./topology.ts";

export class Acks {
  /** Messages the previous run lost, counted at this run's start from the ledger (`settle`). */
  restoredLost = 0;

  constructor(
    private readonly ruleId: string,
    /** The acknowledgement ledger, when this run keeps one (see above). */
    private readonly ledger: AckLedger | undefined,
    /** No operator holds state: what a drain took is durable once the sinks flushed. */
    private readonly stateless: boolean,
    private readonly drains: readonly Drain[],
    private readonly pipelines: readonly SinkPipeline[],
    private readonly topo: Topology,
  ) {
    this.flushed = pipelines.filter((p) => p.journaled);
  }

  /** The pipelines a drain's end flushes without a ledger: those with a cache (a queue in memory has nothing to write). */
  private readonly flushed: readonly SinkPipeline[];

  /** A drain's end writes nothing: no ledger, no sink cache (`commit` does nothing). */
  get idle(): boolean {
    return this.ledger === undefined && this.flushed.length === 0;
  }

  /**
   * End of a drain: the sink caches write what was queued and the ledger what was admitted and
   * what is durable, in one transaction, before the sources acknowledge. A stateless rule's
   * results wait in no backlog then (SinkPipeline.flush): its input is durable in the caches.
   */
  commit(): void {
    const l = this.ledger;
    const stateless = this.stateless;
    if (!l) {
      for (const p of this.flushed) p.flush(stateless);
      return;
    }
    l.tx(() => {
      for (const p of this.pipelines) p.flush(stateless);
      if (this.stateless && this.lookupsIdle()) for (const i of this.drains) i.covered = i.taken;
      for (const i of this.drains) l.write(i.name, i.acked(), i.covered);
    });
  }

  /**
   * No row waits for an asynchronous lookup: those rows are in no sink cache and no checkpoint,
   * so what was taken is durable only when none waits.
   */
  lookupsIdle(): boolean {
    for (const op of this.topo.lookupOps()) if (op.queued() > 0) return false;
    return true;
  }

  /** A checkpoint was stored: everything taken so far is in it (stateful rules). */
  checkpointed(): void {
    if (!this.lookupsIdle()) return;
    // Rows waiting for an asynchronous lookup are in no checkpoint: their messages wait for the next one.
    for (const i of this.drains) i.att?.own?.checkpointed?.();
    const l = this.ledger;
    if (!l) return;
    l.tx(() => {
      for (const i of this.drains) {
        i.covered = i.taken;
        l.write(i.name, i.acked(), i.covered);
      }
    });
  }

  /** The final checkpoint of a stop was stored: late-acknowledging sources acknowledge what it covers. */
  savedAtStop(): void {
    if (this.lookupsIdle()) for (const i of this.drains) i.att?.own?.checkpointed?.();
  }

  /**
   * Counts what the previous run admitted and did not make durable, then starts a fresh ledger
   * (read even when this run keeps none: the rule may have changed since).
   */
  settle(dataDir: string, sources: readonly { readonly name: string }[], log: (line: string) => void): void {
    const l = this.ledger ?? (existsSync(join(dataDir, "cache.db")) ? new AckLedger(cacheDb(dataDir), this.ruleId) : undefined);
    if (!l) return;
    for (const r of l.rows()) {
      const lost = Math.max(0, r.acked - r.covered);
      const node = this.topo.sourceMetrics(r.stream);
      if (node) node.recordsLost = Math.max(0, node.recordsLost) + lost;
      if (lost === 0) continue;
      this.restoredLost += lost;
      log(`rule ${this.ruleId}: ${lost} message(s) of stream ${r.stream} acknowledged before the last stop were lost (neither in the sink cache nor in a checkpoint)`);
    }
    if (this.ledger) {
      for (const src of sources) {
        const node = this.topo.sourceMetrics(src.name);
        if (node && node.recordsLost < 0) node.recordsLost = 0;
      }
    }
    l.clear();
  }

  /**
   * The run closed: the ledger keeps what it admitted and left undone (released unread, state
   * not saved), counted at the next start. `done`: everything taken is durable.
   */
  closed(done: boolean): void {
    const l = this.ledger;
    if (!l) return;
    l.tx(() => {
      for (const i of this.drains) {
        if (done) i.covered = i.taken;
        l.write(i.name, i.acked(), i.covered);
      }
    });
  }
}
