/**
 * A node's errors grouped by message (the console's Debug view): how many times each message
 * occurred, when first and last, and a preview of the last record that caused it. Kept on the
 * error path only; bounded: at most MAX_GROUPS messages per node (the one seen longest ago goes
 * first) and PAYLOAD_BYTES of preview per message, written without serializing the whole record.
 */

export const MAX_GROUPS = 16;
/** The preview's fixed cap in UTF-8 bytes (a cut preview ends with `…`). */
export const PAYLOAD_BYTES = 512;

export interface ErrorGroup {
  readonly message: string;
  count: number;
  readonly first: number;
  last: number;
  /** The last offending record (JSON, or the raw bytes as text), or "" when not known. */
  payload: string;
}

export class ErrorGroups {
  /** Insertion order is recency: a message seen again moves to the end. */
  private readonly groups = new Map<string, ErrorGroup>();

  add(message: string, at: number): void {
    let g = this.groups.get(message);
    if (g) {
      this.groups.delete(message);
      g.count++;
      g.last = at;
    } else {
      if (this.groups.size >= MAX_GROUPS) this.groups.delete(this.groups.keys().next().value!);
      g = { message, count: 1, first: at, last: at, payload: "" };
    }
    this.groups.set(message, g);
  }

  /** Sets the payload of `message`'s group (the error just counted). */
  attach(message: string, payload: string): void {
    const g = this.groups.get(message);
    if (g) g.payload = payload;
  }

  /** The groups, most recent first (copies). */
  list(): ErrorGroup[] {
    return [...this.groups.values()].reverse().map((g) => ({ ...g }));
  }
}

const enc = new TextEncoder();
const dec = new TextDecoder();

/** The first PAYLOAD_BYTES of raw bytes as text (a cut UTF-8 sequence shows as U+FFFD). */
export function bytesPreview(b: Uint8Array): string {
  return b.length <= PAYLOAD_BYTES ? dec.decode(b) : dec.decode(b.subarray(0, PAYLOAD_BYTES - 3)) + "…";
}

/**
 * JSON of `v` stopped at PAYLOAD_BYTES: the walk ends once the budget is spent, so a huge record
 * costs no more than a small one. Objects of a class show their `data` (a tuple's columns) or, for
 * a collection, its `rows`.
 */
export function valuePreview(v: unknown): string {
  const out: string[] = [];
  let left = PAYLOAD_BYTES;
  const put = (s: string): boolean => {
    if (left <= 0) return false;
    const bytes = enc.encode(s);
    if (bytes.length > left) {
      // Cut on a character boundary: a partial sequence would decode to U+FFFD (3 bytes).
      let end = Math.max(0, left - 3);
      while (end > 0 && (bytes[end]! & 0xc0) === 0x80) end--;
      out.push(dec.decode(bytes.subarray(0, end)) + "…");
      left = 0;
      return false;
    }
    out.push(s);
    left -= bytes.length;
    return true;
  };
  const walk = (x: unknown, depth: number): boolean => {
    if (x === null || x === undefined) return put("null");
    if (typeof x === "string") return put(JSON.stringify(x.length > PAYLOAD_BYTES ? x.slice(0, PAYLOAD_BYTES) : x));
    if (typeof x === "number" || typeof x === "boolean" || typeof x === "bigint") return put(String(x));
    if (x instanceof Uint8Array) return put(JSON.stringify(bytesPreview(x)));
    if (typeof x !== "object" || depth > 8) return put(JSON.stringify(String(x)));
    if (Array.isArray(x)) {
      if (!put("[")) return false;
      for (let i = 0; i < x.length; i++) if ((i > 0 && !put(",")) || !walk(x[i], depth + 1)) return false;
      return put("]");
    }
    const o = x as Record<string, unknown>;
    const proto = Object.getPrototypeOf(o);
    if (proto !== Object.prototype && proto !== null) {
      if ("data" in o) return walk(o.data, depth);
      if ("rows" in o) return walk(o.rows, depth);
      if (typeof o.toString === "function" && o.toString !== Object.prototype.toString) return put(JSON.stringify(String(o)));
    }
    if (!put("{")) return false;
    let first = true;
    for (const k in o) {
      if ((!first && !put(",")) || !put(JSON.stringify(k) + ":") || !walk(o[k], depth + 1)) return false;
      first = false;
    }
    return put("}");
  };
  walk(v, 0);
  return out.join("");
}
