/**
 * Sinks that make the same payloads share them. The rules of a shared stream that share one
 * evaluation (runtime/shared-eval.ts) push the same result items into their sinks, one sink after
 * the other; sinks whose transform and encoding are configured alike (the same format, template,
 * field selection, templated properties — the destination, a topic or a path that is not
 * templated, may differ) would make the same outputs and payloads from them. Such sinks hold one
 * `EncodedItem` per configuration: the first to push an item transforms and encodes it as usual and
 * leaves what it made there; the others, pushed the same item next, take it instead of making it
 * again, and count their own nodes as if they had.
 *
 * Only what depends on nothing but the item and the configuration is shared: json (the encoder
 * keeps no state, unlike delimited's first-row columns) and tuple sinks, no batching (a batch is
 * the sink's own), and only an item every output of which was made without a failure. Items are
 * read-only once pushed to the sinks (the sink machinery copies what it changes), so an item is
 * the same result for as long as it is held. Compression and encryption run per sink on the shared
 * encoding (an encryption's nonce is the sink's own).
 */
import type { Item } from "../core/item.ts";
import type { SinkCommon } from "./common.ts";
import type { Output } from "./transform.ts";

/** One output's payload before compression and encryption: bytes sinks' text or bytes, tuple sinks' rows. */
export type Encoded = string | Uint8Array | object;

/** The last item a configuration's sinks transformed and encoded, with what it made. */
export class EncodedItem {
  /** The item, or null while nothing is held. */
  item: Item | null = null;
  readonly outs: Output[] = [];
  readonly payloads: Encoded[] = [];
  /** Sinks holding this configuration's entry. */
  refs = 0;
  constructor(readonly key: string) {}

  /** Holds what `item` made (`outs`, each one's payload in `payloads`). */
  hold(item: Item, outs: readonly Output[], payloads: readonly Encoded[]): void {
    this.item = item;
    const o = this.outs;
    const p = this.payloads;
    o.length = 0;
    p.length = 0;
    for (let i = 0; i < outs.length; i++) {
      o.push(outs[i]!);
      p.push(payloads[i]!);
    }
  }

  clear(): void {
    this.item = null;
    this.outs.length = 0;
    this.payloads.length = 0;
  }
}

const entries = new Map<string, EncodedItem>();

/**
 * The key of what a sink's transform and encoding depend on, or undefined when its payloads are
 * its own (batching, a stateful or registry-bound format). `props` counts only when templated:
 * rendered from the data, they belong to the outputs.
 */
export function encodingKey(c: SinkCommon, bytes: boolean, file: boolean, templatedProps: Record<string, unknown> | null): string | undefined {
  if (c.batchSize > 0 || c.lingerInterval > 0) return undefined;
  if (bytes && (c.format !== "json" || file)) return undefined;
  let key: string;
  try {
    key = JSON.stringify([bytes, c.format, c.sendSingle, c.omitIfEmpty, c.dataTemplate, c.dataField, c.fields ?? null, c.excludeFields ?? null, templatedProps]);
  } catch {
    // Properties JSON cannot hold (a cycle, a bigint): the sink encodes alone.
    return undefined;
  }
  // A template reading the clock or making a random value renders differently for each sink.
  return UNSTABLE.test(key) ? undefined : key;
}

/** The template functions whose result is not the data's alone (a name in a field reads the same: not shared). */
const UNSTABLE = /\b(now|date|dateInZone|uuidv4)\b/;

/** The shared entry of `key` (counted: `release` when the sink closes). */
export function encodedItem(key: string): EncodedItem {
  let e = entries.get(key);
  if (e === undefined) entries.set(key, (e = new EncodedItem(key)));
  e.refs++;
  return e;
}

export function release(e: EncodedItem): void {
  if (--e.refs > 0) return;
  e.clear();
  if (entries.get(e.key) === e) entries.delete(e.key);
}

/** Items a sink took from the shared entry instead of transforming and encoding them (tests, diagnostics). */
export const encodingStats = { reused: 0, held: 0 };
