/**
 * Results built across turns of the event loop (the event loop's stall budget). One
 * result that fans out into many outputs (a window's 10,000 groups with `sendSingle`) is encoded
 * in slices with the event loop running between them: the outputs wait here, in order, and later
 * results queue behind them, so order is what it was without slicing; the pipeline counts what
 * waits here against `room()`, so back-pressure is too. A sink without `sendSingle` sends a window
 * as one JSON array (or delimited text): an output of more than SLICE rows waits here as well and
 * its payload is built row by row across slices (json-slices.ts, delimited-slices.ts); so is a big
 * JSON batch and a whole window's dataTemplate (stepped templates).
 *
 * A big result sent singly is not even transformed in one go: its rows wait here (`offerRows`).
 * With a plain transform (Transformer.plainSingle) each becomes its output as it is encoded; a
 * transform that can fail on a row (a dataTemplate, field selection, templated properties) first
 * renders them all, slice by slice, so that a failing row still drops the whole result as one
 * pass does, and the outputs are encoded after.
 *
 * The pipeline (pipeline.ts) `offer`s what it would encode at once; the backlog takes it when it
 * must wait and hands each output (or built payload) back through its `BacklogHost`, in order.
 * A slice is one turn of the turn budget (core/turn.ts): TURN_MS, at most SLICE_OUTPUTS outputs
 * (the clock looked at every OUTPUTS_PER_LOOK) or SLICE_ROWS rows of a whole payload.
 */
import { failureText, RowError } from "../errors.ts";
import type { NodeMetrics } from "../core/metrics.ts";
import type { Obj } from "../value/values.ts";
import type { TemplateSteps } from "../template/index.ts";
import { isBigArray, JsonSlices, type PayloadSlices } from "./json-slices.ts";
import type { Payload, PayloadEncoder } from "./payload.ts";
import type { Output, Transformer } from "./transform.ts";
import { OUTPUTS_PER_LOOK, SLICE_OUTPUTS, SLICE_ROWS, TURN_MS, Turn, WHOLE } from "../core/turn.ts";

/** A push with more outputs than this encodes the rest in later slices (see the header). */
const SLICE = SLICE_OUTPUTS;

/** A batch writer's flush waiting in the backlog, its payload to be built in slices. */
class PendingBatch {
  constructor(readonly list: Output[]) {}
}

/** The rows of one result sent singly (`offerRows`). */
class PendingRows {
  /** Rows transformed so far. */
  next = 0;
  /** The rendered outputs of a transform that can fail (null: plain); `sent` of them are encoded. */
  readonly outs: Output[] | null;
  sent = 0;
  /** What the entry counts for in `length`: the rows, then the outputs, still to hand on. */
  counted: number;
  constructor(
    readonly rows: readonly Obj[],
    rendered: boolean,
  ) {
    this.outs = rendered ? [] : null;
    this.counted = rows.length;
  }
}

type Backlogged = Output | PendingBatch | PendingRows;

/**
 * What the backlog hands back to its pipeline, in the order the outputs were offered; `tag` is
 * the number the pipeline gave the result they came from at `offer` (SinkItem.tag).
 */
export interface BacklogHost {
  /** Encodes and enqueues `o` as a push would have, under the pipeline's error boundary. */
  encode(o: Output, now: number, traceparent: string | null, tag: number): void;
  /** Transforms (counted) and encodes one row of a result offered with `offerRows`, plain transform. */
  encodeRow(row: Obj, now: number, traceparent: string | null, tag: number): void;
  /** Appends the outputs of one row of a result offered with `offerRows` (throws as the transform does). */
  renderRow(row: Obj, outs: Output[]): void;
  /** All rows of such a result are rendered: the outputs are counted out of the transform. */
  rendered(outs: readonly Output[]): void;
  /** Enqueues the payload built across slices for the whole-array output `o`. */
  enqueueSliced(o: Output, payload: Payload, now: number, traceparent: string | null, tag: number): void;
  /** Enqueues the payload built across slices for a batch writer's flush. */
  enqueueBatch(list: readonly Output[], payload: Payload, now: number, tag: number): void;
  /** The backlog emptied in a slice: the rule may have room again. */
  drained(): void;
}

export class Backlog {
  /** Outputs waiting to be encoded, oldest first (from `pos`). */
  private list: Backlogged[] = [];
  /** The `traceparent` of each entry's push (same index): the item made later carries it. */
  private traces: (string | null)[] = [];
  /** The tag of each entry's result (same index; for a batch, its first result's). */
  private tags: number[] = [];
  private pos = 0;
  /** What the PendingRows entries count for (`counted`) beyond the one each entry is. */
  private extraRows = 0;
  private timer: ReturnType<typeof setImmediate> | undefined;
  /** Whole-array outputs are built in slices (a bytes sink with json or delimited format). */
  private readonly sliceArrays: boolean;
  /** Big batches are built in slices (json format). */
  readonly sliceBatches: boolean;
  /** The payload being built for the head when that is a whole array or a batch, else null. */
  private partial: PayloadSlices | null = null;
  /** The dataTemplate being rendered for the head (`pendingTemplate`), else null. */
  private templating: TemplateSteps | null = null;
  private stopped = false;

  constructor(
    private readonly host: BacklogHost,
    private readonly payloads: PayloadEncoder,
    private readonly transformer: Transformer,
    /** Where a failure outside the encoders is counted (the transform node, as `push` counts it). */
    private readonly transformNode: NodeMetrics,
  ) {
    this.sliceArrays = payloads.sliceable;
    this.sliceBatches = payloads.sliceableBatch;
  }

  /** Outputs (and batches) waiting; a result's rows (`offerRows`) count one each. */
  get length(): number {
    return this.list.length - this.pos + this.extraRows;
  }

  /** The tag of the oldest result not wholly made into items yet, Infinity when none waits. */
  get headTag(): number {
    return this.pos < this.list.length ? this.tags[this.pos]! : Infinity;
  }

  /**
   * Takes one push's outputs when they must wait (behind the backlog, too many for one go or a
   * whole array) and encodes the first slice now; false when the caller encodes them at once.
   */
  offer(outs: readonly Output[], traceparent: string | null, tag: number): boolean {
    if (this.pos === this.list.length && outs.length <= SLICE && !this.hasWhole(outs)) return false;
    for (const o of outs) {
      this.list.push(o);
      this.traces.push(traceparent);
      this.tags.push(tag);
    }
    if (this.timer === undefined) this.slice();
    return true;
  }

  /**
   * Takes the rows of one result sent singly (more than SLICE, plain transform). The first slice
   * runs in the next turn: this one has spent its time making the result (a window's firing).
   */
  offerRows(rows: readonly Obj[], traceparent: string | null, rendered: boolean, tag: number): void {
    this.list.push(new PendingRows(rows, rendered));
    this.traces.push(traceparent);
    this.tags.push(tag);
    this.extraRows += rows.length - 1;
    if (this.timer === undefined) this.timer = setImmediate(sliceLater, this);
  }

  /** Takes a batch writer's flush when it is built across slices (json format, behind the backlog or big). */
  offerBatch(list: Output[], tag: number): boolean {
    if (!this.sliceBatches || !(this.pos < this.list.length || list.length > SLICE || this.hasWhole(list))) return false;
    this.list.push(new PendingBatch(list));
    this.traces.push(null);
    this.tags.push(tag);
    if (this.timer === undefined) this.slice();
    return true;
  }

  /** No more slices are scheduled (the pipeline is stopping). */
  stop(): void {
    this.stopped = true;
  }

  private hasWhole(outs: readonly Output[]): boolean {
    if (!this.sliceArrays) return false;
    for (let i = 0; i < outs.length; i++) if (this.isWhole(outs[i]!)) return true;
    return false;
  }

  /** A whole window to build across slices: a big array to encode or a template to render. */
  private isWhole(o: Output): boolean {
    return o.pendingTemplate || (this.sliceArrays && isBigArray(o, SLICE));
  }

  /** Encodes the next slice of the backlog; schedules the one after it, if any. */
  slice(): void {
    this.timer = undefined;
    const list = this.list;
    const end = Math.min(list.length, this.pos + SLICE);
    const now = Date.now();
    const turn = Turn.inLoop(TURN_MS);
    const traces = this.traces;
    const tags = this.tags;
    let i = this.pos;
    try {
      while (i < end) {
        const o = list[i]!;
        const tp = traces[i]!;
        const tag = tags[i]!;
        if (o instanceof PendingRows) {
          if (!this.encodeRows(o, turn, now, tp, tag)) break;
          list[i++] = undefined as unknown as Output;
          if (turn.spent()) break;
          continue;
        }
        if (o instanceof PendingBatch || this.isWhole(o)) {
          // A whole array or a batch: built across slices; the head stays in the backlog until it is done.
          if (!this.encodeWhole(o, turn, now, tp, tag)) break;
          list[i++] = undefined as unknown as Output;
          if (turn.spent()) break;
          continue;
        }
        list[i++] = undefined as unknown as Output; // released for the collector as it goes
        this.host.encode(o, now, tp, tag);
        if (!turn.more(i, OUTPUTS_PER_LOOK)) break;
      }
    } finally {
      this.pos = i;
      if (i === list.length) {
        this.list = [];
        this.traces = [];
        this.tags = [];
        this.pos = 0;
        this.extraRows = 0;
        this.host.drained();
      } else if (!this.stopped) this.timer = setImmediate(sliceLater, this);
    }
  }

  /** Encodes every output still waiting now (end of input; a stateless rule's drain end with a cache, SinkPipeline.flush). */
  drain(): void {
    if (this.timer !== undefined) clearImmediate(this.timer);
    this.timer = undefined;
    const list = this.list;
    const traces = this.traces;
    const tags = this.tags;
    const now = Date.now();
    for (let i = this.pos; i < list.length; i++) {
      const o = list[i]!;
      const tp = traces[i]!;
      const tag = tags[i]!;
      if (o instanceof PendingRows) this.encodeRows(o, WHOLE, now, tp, tag);
      // A payload already begun is finished; a whole array not begun yet is encoded in one pass like any output.
      else if (o instanceof PendingBatch || o.pendingTemplate || (i === this.pos && this.partial !== null)) this.encodeWhole(o, WHOLE, now, tp, tag);
      else this.host.encode(o, now, tp, tag);
    }
    this.list = [];
    this.traces = [];
    this.tags = [];
    this.pos = 0;
    this.extraRows = 0;
  }

  /**
   * Hands on the rows of `p`, at most SLICE of them and until the turn is spent (looked at every
   * OUTPUTS_PER_LOOK); true once all are. A rendering transform renders every row first and then
   * encodes the outputs; a row it fails on drops the result, counted on the transform node as one
   * pass counts it.
   */
  private encodeRows(p: PendingRows, turn: Turn, now: number, tp: string | null, tag: number): boolean {
    const rows = p.rows;
    const budget = turn.unbounded ? Infinity : SLICE;
    let handled = 0;
    try {
      const outs = p.outs;
      if (outs === null) {
        while (p.next < rows.length && handled < budget) {
          this.host.encodeRow(rows[p.next++]!, now, tp, tag);
          if (!turn.more(++handled, OUTPUTS_PER_LOOK)) return this.recount(p, rows.length - p.next);
        }
        return this.recount(p, rows.length - p.next);
      }
      if (p.next < rows.length) {
        while (p.next < rows.length && handled < budget) {
          this.host.renderRow(rows[p.next++]!, outs);
          if (!turn.more(++handled, OUTPUTS_PER_LOOK)) return false;
        }
        if (p.next < rows.length) return false;
        this.host.rendered(outs);
        this.recount(p, outs.length);
      }
      while (p.sent < outs.length && handled < budget) {
        this.host.encode(outs[p.sent++]!, now, tp, tag);
        if (!turn.more(++handled, OUTPUTS_PER_LOOK)) break;
      }
      return this.recount(p, outs.length - p.sent);
    } catch (e) {
      // Only rendering throws (encode has the host's own boundary): the result is dropped.
      this.transformNode.exception(e instanceof RowError ? e.message : failureText(e), now);
      return this.recount(p, 0);
    }
  }

  /** `p` now counts for `left` (still to hand on); true, and counted as the entry alone, once none is left. */
  private recount(p: PendingRows, left: number): boolean {
    const counted = left > 0 ? left : 1;
    this.extraRows += counted - p.counted;
    p.counted = counted;
    return left === 0;
  }

  /**
   * Builds the payload of the head `o`, a whole-array output or a batch, until the turn is spent; true once
   * it is enqueued or dropped. The boundary is the host's `encode`'s; a RowError (NaN) drops `o`,
   * counted on the encode or batchWriter node as one pass counts it.
   */
  private encodeWhole(o: Output | PendingBatch, turn: Turn, now: number, tp: string | null, tag: number): boolean {
    if (!(o instanceof PendingBatch) && o.pendingTemplate) return this.renderWhole(o, turn, now, tp, tag);
    const pl = this.payloads;
    const batch = o instanceof PendingBatch;
    const s = (this.partial ??= batch ? new JsonSlices(o.list, true) : pl.beginSingle(o, now));
    let payload: Payload;
    try {
      if (!s.step(turn, SLICE_ROWS)) return false;
      payload = batch ? pl.endBatch(s, now) : pl.endSingle(s, now);
    } catch (e) {
      this.partial = null;
      if (!(e instanceof RowError)) this.transformNode.exception(failureText(e), now);
      else if (batch) pl.writerNode!.exception(e.message, now);
      else pl.failSingle(e.message, now);
      return true;
    }
    this.partial = null;
    if (batch) {
      const w = pl.writerNode!;
      w.recordsOut++;
      w.processLatencyUs = Math.round(s.spentMs * 1000);
      this.host.enqueueBatch(o.list, payload, now, tag);
    } else this.host.enqueueSliced(o, payload, now, tp, tag);
    return true;
  }

  /**
   * Renders the dataTemplate of the head `o` (`pendingTemplate`) until the turn is spent; true once done,
   * when `o` is encoded as the transform's one pass would have made it (template text).
   */
  private renderWhole(o: Output, turn: Turn, now: number, tp: string | null, tag: number): boolean {
    const steps = (this.templating ??= this.transformer.beginTemplate(o));
    try {
      if (!steps.step(turn, SLICE_ROWS)) return false;
    } catch (e) {
      this.templating = null;
      // As in one pass, where the transform throws before counting the output out.
      const t = this.transformNode;
      t.recordsOut--;
      t.messagesProcessed -= o.rows;
      t.exception(this.transformer.templateError(o.data, e).message, now);
      return true;
    }
    this.templating = null;
    o.text = steps.output;
    o.data = null;
    o.pendingTemplate = false;
    this.host.encode(o, now, tp, tag);
    return true;
  }
}

/** A backlog's next slice in a later turn (one function for every backlog: none holds a closure of its own). */
function sliceLater(b: Backlog): void {
  b.slice();
}
