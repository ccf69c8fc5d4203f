/** The sink-node contract: what a rule's topology pushes results into. */
import type { Consumer } from "./item.ts";
import type { NodeMetrics } from "./metrics.ts";

/**
 * A sink as the topology sees it: a consumer with metrics and an end. A bounded sink pushes back
 * through `room` (results it takes before the rule should wait) and `onRoom` (called once when
 * it has room again); a sink without them never makes the rule wait.
 */
export interface SinkNode extends Consumer {
  readonly metrics: NodeMetrics[];
  end(): void;
  room?(): number;
  /**
   * The W3C `traceparent` of the result being pushed, set around `push` by a traced rule (null
   * otherwise); a sink that can carry it downstream (MQTT v5 user properties) does.
   */
  traceparent?: string | null;
  onRoom?(fn: () => void): void;
  /** The sink node's name (`mqtt_0`): its state's key in the rule's checkpoint. */
  readonly name?: string;
  /**
   * State the sink keeps across a restore from a checkpoint (undefined: none), and its inverse;
   * taken with the snapshot, encoded once it is stored (it may count on until then: SinkPipeline.snapshot).
   */
  snapshot?(): unknown;
  restore?(s: unknown): void;
}
