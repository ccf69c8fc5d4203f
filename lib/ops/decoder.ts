/**
 * `<i>_decoder` (rest-api.md §6.3): the node of a byte source's payload decoding. floe decodes in
 * the rule's inlet, before the tuple exists, so this node passes tuples through and carries the
 * counts; decode failures are recorded on it by the topology (`sourceError`), its
 * process_latency_us (the decoding time, sampled) by the rule's inlet.
 */
import { RowError } from "../errors.ts";
import { Watermark, type Item } from "../core/item.ts";
import { Operator, type OpEnv } from "../core/operator.ts";

export class DecoderOp extends Operator {
  constructor(name: string, env: OpEnv) {
    super(name, env, "");
  }

  /** A pass-through: counts only (no timing of its own, which would overwrite the decode time). */
  override push(item: Item): void {
    if (!(item instanceof RowError || item instanceof Watermark)) this.passed(this.env.now());
    this.next.push(item);
  }

  /** Counts one decoded record at `now` (also for a record the next node's index rejected). */
  passed(now: number): void {
    this.metrics.passed(now);
  }

  protected process(item: Item): void {
    this.emit(item);
  }
}
