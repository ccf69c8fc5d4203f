/**
 * The `data` attribute of a span: what the node saw, as JSON text (Go encoding, as eKuiper's sinks
 * print it), cut at a bound so a traced rule's store stays bounded whatever the payloads.
 */
import { RowError } from "../../errors.ts";
import { Tuple } from "../../expr/row.ts";
import type { Obj, Value } from "../../value/values.ts";
import { encodeGoJson } from "../../value/json-encode.ts";
import { Collection, Emission, type Item } from "../../core/item.ts";

/** Characters of data kept per span attribute. */
export const MAX_DATA = 4096;

const utf8 = new TextDecoder();

const utf8Out = new TextEncoder();

function cut(s: string): string {
  if (s.length <= MAX_DATA) return s;
  // JSC keeps a slice as a view of the whole text: a stored span kept the whole encoded row alive
  // (300 KB rows: 1.8 GB for 2,048 traces). Re-decoding makes a string of its own (reading a
  // character of a rope flattens it too, but the optimizing JIT drops an unused read).
  return utf8.decode(utf8Out.encode(s.slice(0, MAX_DATA))) + "…";
}

function json(v: Value): string {
  try {
    return encodeGoJson(v);
  } catch {
    // NaN/Inf have no JSON form: the trace shows them rather than failing the message.
    return String(v);
  }
}

/**
 * The text of the last row object encoded: one message's row passes the source, the decoder, the
 * filter and the projection as the same object (nodes replace a row's data, they do not edit it),
 * so it is encoded once.
 */
export class DataMemo {
  last: object | null = null;
  text = "";

  of(data: Obj): string {
    if (data !== this.last) {
      this.text = cut(json(data));
      this.last = data;
    }
    return this.text;
  }
}

/** A source message before decoding: the payload bytes as text, or the rows a tuple source made. */
export function messageData(payload: Uint8Array | null, rows: Obj | Obj[] | null, memo: DataMemo): string {
  if (payload !== null) return cut(utf8.decode(payload.length > MAX_DATA * 4 ? payload.subarray(0, MAX_DATA * 4) : payload));
  if (rows !== null && !Array.isArray(rows)) return memo.of(rows);
  return cut(json(rows));
}

/** The attributes of a node's span for `item`: `data`, or `error` for a forwarded error. */
export function itemAttributes(item: Item, into: Record<string, string>, memo: DataMemo): void {
  if (item instanceof RowError) {
    into.error = item.message;
    return;
  }
  if (item instanceof Tuple) {
    into.data = memo.of(item.data);
    return;
  }
  if (item instanceof Emission) {
    into.data = cut(json(item.rows));
    return;
  }
  if (item instanceof Collection) {
    const src = item.groups ?? item.rows;
    const rows: Obj[] = new Array(src.length);
    for (let i = 0; i < src.length; i++) rows[i] = src[i]!.columns(undefined);
    into.data = cut(json(rows));
  }
}
