/**
 * A traced rule's span collection (rest-api.md §5 "Tracing a rule", §15). It exists only while the
 * rule's tracing is started: the topology then puts a TracedConsumer in front of every node and the
 * rule's inlets open one source span per message, so an untraced rule runs the plain push chain
 * and pays nothing per message.
 *
 * The push chain is synchronous, so the span a node opens is the parent of every span opened
 * while it pushes on: `current` is the stack's top, restored when the push returns. What a node
 * emits later (a window on its timer, an asynchronous lookup) finds the trace again through the
 * rows it carries (`mark`), and a window's emission links every trace of the rows it holds. A
 * processing-time window whose wall-clock timer is late fires it when the next row arrives: that
 * firing runs before the row's span opens, outside its trace, as the timer's own would.
 */
import { Tuple } from "../../expr/row.ts";
import { Collection, Watermark, type Consumer, type Item } from "../../core/item.ts";
import type { NodeMetrics } from "../../core/metrics.ts";
import { DataMemo, itemAttributes } from "./data.ts";
import type { SinkNode } from "../../core/sink.ts";
import { formatTraceparent, newTraceId, type RemoteParent } from "./ids.ts";
import { epochMs, Span, type SpanLink, type SpanSink } from "./span.ts";

/**
 * `always`: every message is traced (continuing an incoming trace context when it has one);
 * `head`: only the messages that arrive with one (rest-api.md §5).
 */
export type TraceStrategy = "always" | "head";

/** Links kept on one emission span: a window may hold many rows, the span stays bounded. */
const MAX_LINKS = 128;

export class RuleTracer {
  /** The innermost open span of the message being pushed; null between messages. */
  current: Span | null = null;
  /** The last span each traced row passed through (weak: rows die with their windows). */
  private readonly rows = new WeakMap<object, Span>();
  /** The `data` text of the row last seen. */
  readonly memo = new DataMemo();

  constructor(
    readonly ruleId: string,
    readonly strategy: TraceStrategy,
    private readonly sink: SpanSink,
  ) {}

  /**
   * Opens the root span of one source message (`source_<stream>`), continuing `remote` when the
   * message carried a trace context; null when the strategy leaves the message untraced.
   */
  beginMessage(name: string, remote: RemoteParent | null, data: string): Span | null {
    if (remote === null && this.strategy === "head") return null;
    const span = remote ? new Span(name, remote.traceId, null, remote.spanId, this.ruleId, null) : new Span(name, newTraceId(), null, "", this.ruleId, null);
    span.attributes.data = data;
    return span;
  }

  /** A child of `parent`, or the root of a new trace when `parent` is null. */
  open(name: string, parent: Span | null, links: readonly SpanLink[] | null): Span {
    return parent ? new Span(name, parent.traceId, parent, "", this.ruleId, links) : new Span(name, newTraceId(), null, "", this.ruleId, links);
  }

  /** Ends `span` now and hands it to the store/exporter. */
  close(span: Span): void {
    span.end = epochMs();
    this.sink.record(span);
  }

  /** Remembers the span a row went through, for what is emitted from it outside the push. */
  mark(row: object, span: Span): void {
    this.rows.set(row, span);
  }

  spanOf(row: object): Span | undefined {
    return this.rows.get(row);
  }

  /** Links to the traces of the rows `c` holds, except `own`'s trace; null when none is traced. */
  linksOf(c: Collection, own: Span | null): SpanLink[] | null {
    let out: SpanLink[] | null = null;
    let seen: Set<string> | null = null;
    const rows = c.rows;
    for (let i = 0; i < rows.length; i++) {
      const s = this.rows.get(rows[i]!);
      if (s === undefined || (own !== null && s.traceId === own.traceId)) continue;
      seen ??= new Set();
      if (seen.has(s.traceId)) continue;
      seen.add(s.traceId);
      (out ??= []).push(s);
      if (out.length >= MAX_LINKS) break;
    }
    return out;
  }
}

/**
 * The traced rows a window took in since its last emission, for the links of the next one when
 * the emission carries no rows (an incremental window folds them into accumulators). Bounded.
 */
export class LinkPool {
  private links: SpanLink[] = [];
  private traces = new Set<string>();

  add(span: Span): void {
    if (this.links.length >= MAX_LINKS || this.traces.has(span.traceId)) return;
    this.traces.add(span.traceId);
    this.links.push(span);
  }

  /** The links gathered (without `own`'s trace), emptying the pool; null when none. */
  drain(own: Span | null): SpanLink[] | null {
    const l = this.links;
    if (l.length === 0) return null;
    this.links = [];
    this.traces = new Set();
    const out = own === null ? l : l.filter((x) => x.traceId !== own.traceId);
    return out.length ? out : null;
  }
}

/** A window's timers that a late wall clock has not fired by a row's time (WindowOp.catchUp). */
export interface LateTimers {
  catchUp(ts: number): void;
}

/**
 * Stands in front of one node while its rule is traced: opens the node's span for each item, as a
 * child of the span pushing it, records what the node saw (and the failure it counted), and
 * closes the span when the node has handed its results on.
 */
export class TracedConsumer implements Consumer {
  constructor(
    readonly inner: Consumer,
    readonly name: string,
    private readonly tracer: RuleTracer,
    /** The node's metrics, to tell a failure it counted while handling the item. */
    private readonly metrics: NodeMetrics | null,
    /** The node pushing into this one: names the root of an emission made outside any message. */
    private readonly from: string,
    /** This node is a window: the traced rows it takes in, for its emissions' links. */
    private readonly intake: LinkPool | null = null,
    /** The pushing node is a window: its intake, the links of what it emits. */
    private readonly emitter: LinkPool | null = null,
    /** This node is a sink: it is told the trace context of what it is pushed, to carry it on. */
    private readonly sink: SinkNode | null = null,
    /** This node is a window: its timers due by a row's time fire before the row's span opens. */
    private readonly late: LateTimers | null = null,
  ) {}

  push(item: Item): void {
    const t = this.tracer;
    if (item instanceof Watermark) {
      this.inner.push(item);
      return;
    }
    // A window closed by this row's arrival (its timer late) emits outside the row's trace, and
    // before the row joins the intake: the emission neither runs in nor links a row it lacks.
    if (this.late !== null && item instanceof Tuple) this.catchUp(item.ts);
    const prev = t.current;
    let parent = prev;
    let links: SpanLink[] | null = null;
    // What a window emits links the traces of its rows (once: on the edge out of the window, or
    // wherever a collection turns up outside any message); an incremental window's emission has
    // no rows, its intake names them.
    if (item instanceof Collection && (this.emitter !== null || parent === null)) {
      const byRows = t.linksOf(item, parent);
      const pooled = this.emitter?.drain(parent) ?? null;
      links = byRows ?? pooled;
    }
    if (parent === null && item instanceof Tuple) parent = t.spanOf(item) ?? null;
    if (parent === null) {
      // Outside any traced message and carrying no traced row: not part of a trace.
      if (links === null) {
        this.inner.push(item);
        return;
      }
      // An emission outside any message (a window's timer): a new trace whose root is the
      // emitting node, linked to the traces of the rows it emits.
      const root = t.open(this.from, null, links);
      itemAttributes(item, root.attributes, t.memo);
      t.current = root;
      try {
        this.traced(item, root, null, root);
      } finally {
        t.current = prev;
        t.close(root);
      }
      return;
    }
    this.traced(item, parent, links, prev);
  }

  /** Fires the window's late timers as if no message were being pushed (their emissions root new traces). */
  private catchUp(ts: number): void {
    const t = this.tracer;
    const prev = t.current;
    t.current = null;
    try {
      this.late!.catchUp(ts);
    } finally {
      t.current = prev;
    }
  }

  /** The node's span for `item`, a child of `parent`, open while the node handles it; then `restore` is current again. */
  private traced(item: Item, parent: Span, links: SpanLink[] | null, restore: Span | null): void {
    const t = this.tracer;
    const span = t.open(this.name, parent, links);
    itemAttributes(item, span.attributes, t.memo);
    if (item instanceof Tuple) t.mark(item, span);
    this.intake?.add(span);
    const m = this.metrics;
    const failures = m === null ? 0 : m.exceptions;
    t.current = span;
    const sink = this.sink;
    if (sink !== null) sink.traceparent = formatTraceparent(span.traceId, span.spanId);
    try {
      this.inner.push(item);
    } finally {
      if (sink !== null) sink.traceparent = null;
      t.current = restore;
      if (m !== null && m.exceptions > failures) span.attributes.error = m.lastException;
      t.close(span);
    }
  }
}
