/**
 * Opens the sources rules read. A plain stream gets its own connector and bus per rule; a shared
 * stream (`SHARED="true"`) has one connector and one bus, and every rule reading it is a
 * subscriber (reserve-then-commit: the slowest rule paces the source). The connector closes when
 * its last rule detaches.
 */
import { errorText } from "../errors.ts";
import { NodeMetrics } from "../core/metrics.ts";
import type { StreamDef } from "../plan/streams.ts";
import { createDecoder, type Decoder } from "../formats/decode.ts";
import { ConnectionReporter } from "../core/connection.ts";
import { createSourceConnector, isByteSource, resolveSourceProps } from "../connectors/sources.ts";
import type { SourceMessage } from "../source/message.ts";
import type { SourceConnector, SourceContext } from "../source/connector.ts";
import { PropReader } from "../config/props.ts";
import { Bus, type OverflowPolicy, type Subscription } from "../core/bus.ts";
import type { RuntimeEnv } from "./env.ts";
import { indexableCond, PredicateIndex, rejects, type IndexMember, type SkipTarget } from "./predicate-index.ts";
import type { Expr } from "../sql/ast.ts";

export interface AttachOptions {
  readonly capacity: number;
  readonly policy: OverflowPolicy;
  /** The rule's drain: called after records were admitted. */
  readonly wake: () => void;
  /** The rule's source node (connection metrics, exceptions). */
  readonly node: NodeMetrics;
  /**
   * A shared stream: the node every rule reading it reports instead of its own, and whether this
   * rule's input is what the node counts. Called at attach, and again when the counting rule leaves.
   */
  readonly share?: (node: NodeMetrics, counting: boolean) => void;
  readonly onEof: () => void;
  /** The source failed for good (`SourceContext.fail`): the rule stops by error. */
  readonly onFail?: (e: unknown) => void;
  /** The attaching node as a named connection's reference, `<ruleId>_<stream>_0`. */
  readonly ref: string;
  /** A connector built by the host instead of the one TYPE names (pipe mode's stdin). */
  readonly connector?: SourceConnector;
  /** A checkpointed read position to rewind a rewindable, unshared source to before it opens. */
  readonly offset?: unknown;
  /** The rule checkpoints its state: an unshared source acknowledging late does so at each checkpoint. */
  readonly checkpointAcks?: boolean;
  /** The rule reads the messages' metadata (SourceContext.wantsMeta); undefined counts as true. */
  readonly meta?: boolean;
  /**
   * The rule's first node after the decoder is a WHERE, and nothing else comes before it: on a
   * shared byte stream the predicate index may answer it (`where`, as written) and count what it
   * rejects through `target` instead of queueing the message.
   */
  readonly filter?: { readonly where: Expr; readonly fold: boolean; readonly target: SkipTarget };
}

export interface Attachment {
  readonly sub: Subscription<SourceMessage>;
  /** The payload decoder of a byte source, null for tuple sources. */
  readonly decoder: Decoder | null;
  /** The connector, when this rule is its only reader (offsets are per rule, not per shared source). */
  readonly own: SourceConnector | undefined;
  /** The connector acknowledges only what its rules took (SourceConnector.holdsAcks). */
  readonly holdsAcks: boolean;
  /**
   * The stream's sampled decode time (µs): whoever decodes a message for the stream's rules writes
   * it, and a rule reusing that decode reports it on its decoder node.
   */
  readonly decodeLatency: { us: number };
  /** A shared stream's drain groups by key (drain-group.ts); one per attachment otherwise. */
  readonly groups: Map<string, unknown>;
  release(): Promise<void>;
}

class OpenSource {
  /**
   * `shared`: the hub's shared sources, which hold this one under `key` until its last rule
   * detaches; null for a rule's own source.
   */
  constructor(
    readonly key: string,
    readonly shared: Map<string, OpenSource> | null,
  ) {}

  readonly bus = new Bus<SourceMessage>();
  readonly status = new ConnectionReporter();
  /** The source node: the rule's own, or a shared stream's own node (AttachOptions.share). */
  node!: NodeMetrics;
  /** A shared stream's rules in attach order; the first one's input is what `node` counts. */
  readonly sharers: ((node: NodeMetrics, counting: boolean) => void)[] = [];
  readonly eofs = new Set<() => void>();
  readonly fails = new Set<(e: unknown) => void>();
  refs = 0;
  /** Attached rules that read metadata (SourceContext.wantsMeta). */
  metaReaders = 0;
  connector: SourceConnector | undefined;
  ended = false;
  /**
   * A shared byte stream's one decoder: the first rule to take a message decodes it for all (the
   * rows stay on the message), or `prepare` does when the predicate index needs them.
   */
  decoder: Decoder | null = null;
  readonly index = new PredicateIndex();
  readonly decodeLatency = { us: 0 };
  readonly groups = new Map<string, unknown>();
  private decodes = 0;

  /**
   * The predicate index's classification of each message of the batch being admitted, by its
   * place in the batch (null: every rule gets it), read by the subscriptions' `skip` at commit.
   */
  private readonly cuts: (Int32Array | null)[] = [];

  /** With rules in the index: decodes each admitted message once and classifies it. */
  readonly prepare = (batch: readonly SourceMessage[], from: number, to: number): void => {
    const dec = this.decoder;
    const cuts = this.cuts;
    cuts.length = 0;
    if (dec === null || this.index.size === 0) return;
    for (let i = from; i < to; i++) {
      const m = batch[i]!;
      cuts.push(null);
      if (m.payload !== null && m.decoded === null) {
        const timed = (++this.decodes & 63) === 1;
        const t0 = timed ? performance.now() : 0;
        try {
          m.decoded = dec(m.payload);
        } catch {
          // Each rule decodes it again and counts the error on its own decoder node.
          continue;
        }
        if (timed) this.decodeLatency.us = Math.round((performance.now() - t0) * 1000);
      }
      if (m.decoded !== null) cuts[i - from] = this.index.classify(m.decoded);
    }
    this.now = Date.now();
  };
  /** The classification of the message `at` in the batch being admitted (null: every rule gets it). */
  cutsAt(at: number): Int32Array | null {
    return this.cuts[at] ?? null;
  }

  /** The time of the batch being admitted (what a skipped rule's nodes record as their last invocation). */
  now = 0;
  /** What every subscription's overflow counts (set at the first attach: the stream's name is the same for all). */
  onDrop!: (n: number) => void;
}

/**
 * A rule's attachment to an open source. A class rather than closures over `attach`'s frame: the
 * hub holds it as long as the rule reads, and an idle rule's memory is mostly such small parts.
 */
class Attached implements Attachment {
  constructor(
    readonly sub: Subscription<SourceMessage>,
    readonly decoder: Decoder | null,
    private readonly src: OpenSource,
    private readonly member: IndexMember | undefined,
    private readonly readsMeta: boolean,
    private readonly onEof: () => void,
    private readonly onFail: AttachOptions["onFail"],
    private readonly share: AttachOptions["share"],
  ) {}

  get own(): SourceConnector | undefined {
    return this.src.shared ? undefined : this.src.connector;
  }

  get holdsAcks(): boolean {
    return this.src.connector?.holdsAcks === true;
  }

  get decodeLatency(): { us: number } {
    return this.src.decodeLatency;
  }

  get groups(): Map<string, unknown> {
    return this.src.groups;
  }

  async release(): Promise<void> {
    const s = this.src;
    const { onEof, onFail, share } = this;
    if (this.member) s.index.remove(this.member);
    this.sub.close();
    if (this.readsMeta) s.metaReaders--;
    s.eofs.delete(onEof);
    if (onFail) s.fails.delete(onFail);
    if (share) {
      const i = s.sharers.indexOf(share);
      s.sharers.splice(i, 1);
      // The counting rule left: the next one's input keeps the shared node counting.
      if (i === 0 && s.sharers.length) s.sharers[0]!(s.node, true);
    }
    if (--s.refs > 0) return;
    s.shared?.delete(s.key);
    await s.connector?.close();
  }
}

/**
 * A shared stream's source node name: eKuiper names a shared source on a named connection
 * `<connection>/<confKey>` (metric keys `source_conn1/ttt_0_…`), others by the stream.
 */
function sharedNodeName(def: StreamDef, props: Record<string, unknown>): string {
  const sel = new PropReader(props).str("connectionSelector");
  return sel ? `${sel}/${def.options.CONF_KEY ?? "default"}` : def.name;
}

export class SourceHub {
  private readonly shared = new Map<string, OpenSource>();

  constructor(private readonly env: RuntimeEnv) {}

  private decoderOf(def: StreamDef, props: Record<string, unknown>): Decoder {
    return createDecoder(def, { useInt64ForWholeNumber: new PropReader(props).bool("useInt64ForWholeNumber"), schemas: this.env.schemas });
  }

  /**
   * Puts a rule whose WHERE the index can hold into the shared stream's index: its subscription
   * then skips (and the rule counts) each message the index says the WHERE rejects.
   */
  private index(s: OpenSource, sub: Subscription<SourceMessage>, stream: string, f: AttachOptions["filter"]): IndexMember | undefined {
    const cond = f ? indexableCond(f.where, stream, f.fold) : null;
    if (!f || !cond || !this.env.predicateIndex) return undefined;
    const member = s.index.add(cond);
    const target = f.target;
    sub.skip = (at) => {
      const cuts = s.cutsAt(at);
      return cuts !== null && rejects(member, cuts) && target.skip(s.now);
    };
    return member;
  }

  /** Rules of the shared stream `name` whose WHERE its predicate index answers. */
  indexedRules(name: string): number {
    let n = 0;
    for (const [key, src] of this.shared) if (key.startsWith(name + "\u0000")) n += src.index.size;
    return n;
  }

  /** Resolves and validates a stream's connector properties (throws EngineError). */
  async connectorFor(def: StreamDef, type: string): Promise<{ connector: SourceConnector; props: Record<string, unknown> }> {
    const props = await resolveSourceProps(def, type, this.env);
    return { connector: createSourceConnector(type, props, this.env), props };
  }

  async attach(def: StreamDef, type: string, o: AttachOptions): Promise<Attachment> {
    // The options too: a partitioned stream's runs read it with its statement's options rewritten
    // for their partition (server/partitioned-run.ts streamsForPartition), each from its own source.
    const key = `${def.name}\u0000${def.statement}\u0000${JSON.stringify(def.options)}`;
    const isShared = !!def.options.SHARED && !o.connector;
    let src = isShared ? this.shared.get(key) : undefined;
    let props: Record<string, unknown> = {};
    let fresh = false;
    if (!src) {
      src = new OpenSource(key, isShared ? this.shared : null);
      if (o.connector) src.connector = o.connector;
      else {
        const c = await this.connectorFor(def, type);
        src.connector = c.connector;
        props = c.props;
      }
      fresh = true;
      src.node = isShared ? new NodeMetrics("source", sharedNodeName(def, props)) : o.node;
      src.status.attach(src.node);
      const n0 = src.node;
      src.onDrop = (n) => n0.exception(`buffer full, drop ${n} message(s) from source_${def.name}`, Date.now());
      if (isShared) {
        this.shared.set(key, src);
        if (isByteSource(type)) {
          src.decoder = this.decoderOf(def, props);
          src.bus.prepare = src.prepare;
        }
      }
    }
    const s = src;
    const node = s.node;
    // Counted before subscribing: every message this rule's subscription sees carries metadata.
    const readsMeta = o.meta !== false;
    if (readsMeta) s.metaReaders++;
    const sub = s.bus.subscribe(o.capacity, o.policy, o.wake);
    sub.onDrop = s.onDrop;
    const member = s.decoder && o.policy === "block" ? this.index(s, sub, def.name, o.filter) : undefined;
    s.refs++;
    s.eofs.add(o.onEof);
    const onFail = o.onFail;
    if (onFail) s.fails.add(onFail);
    const share = isShared ? o.share : undefined;
    if (share) {
      s.sharers.push(share);
      share(node, s.sharers.length === 1);
    }
    const decoder = s.decoder ?? (isByteSource(type) ? this.decoderOf(def, props) : null);
    if (fresh && !isShared && o.offset !== undefined) s.connector!.rewind?.(o.offset);
    if (fresh) {
      const ctx: SourceContext = {
        bus: s.bus,
        status: s.status,
        ref: o.ref,
        exception: (m) => node.exception(m, Date.now()),
        duplicates: (n) => {
          node.duplicates += n;
        },
        eof: () => {
          s.ended = true;
          for (const f of s.eofs) f();
        },
        fail: (e) => {
          node.exception(errorText(e), Date.now());
          for (const f of s.fails) f(e);
        },
        log: (l, level) => this.env.log(l, level),
        ready: (text) => this.env.sourceReady?.(def.name, text),
        wantsMeta: () => s.metaReaders > 0,
        ackMode: !isShared && o.checkpointAcks ? "checkpoint" : "take",
      };
      try {
        await s.connector!.open(ctx);
      } catch (e) {
        node.exception(errorText(e), Date.now());
        throw e;
      }
    } else if (s.ended) o.onEof();
    // Only what `release` needs of the options: the callbacks the source's sets hold anyway.
    return new Attached(sub, decoder, s, member, readsMeta, o.onEof, onFail, share);
  }
}
