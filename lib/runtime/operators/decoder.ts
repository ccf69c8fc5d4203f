/**
 * `<i>_decoder` (rest-api.md §6.3): the node of a byte source's payload decoding. floe decodes in
 * the rule's inlet, before the tuple exists, so this node passes tuples through and carries the
 * counts; decode failures are recorded on it by the topology (`sourceError`).
 */
import type { Item } from "../item.ts";
import { Operator, type OpEnv } from "../operator.ts";

export class DecoderOp extends Operator {
  constructor(name: string, env: OpEnv) {
    super(name, env, "");
  }

  protected process(item: Item): void {
    this.metrics.messagesProcessed++;
    this.emit(item);
  }
}
