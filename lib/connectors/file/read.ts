/**
 * Readers of the file source (rules-and-sinks.md §11.1): files as line batches read chunk by
 * chunk (the caller pulls the next chunk only after publishing the last, so a refused bus stops
 * the reading), a JSON array split into its element payloads without parsing them, csv records
 * (Go encoding/csv quoting) and the `ignoreStartLines` / `ignoreEndLines` filter.
 */

const NL = 10;
const CR = 13;

function trimCr(b: Uint8Array): Uint8Array {
  return b.length > 0 && b[b.length - 1] === CR ? b.subarray(0, b.length - 1) : b;
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.length + b.length);
  out.set(a, 0);
  out.set(b, a.length);
  return out;
}

/** The lines of a file (without `\n` / `\r\n`), one array per chunk read. */
export async function* readLines(path: string): AsyncGenerator<Uint8Array[]> {
  const reader = Bun.file(path).stream().getReader();
  let rest: Uint8Array | null = null;
  try {
    for (;;) {
      const r = await reader.read();
      if (r.done) break;
      const buf: Uint8Array = rest ? concat(rest, r.value) : r.value;
      const lines: Uint8Array[] = [];
      let start = 0;
      for (let i = buf.indexOf(NL); i >= 0; i = buf.indexOf(NL, start)) {
        lines.push(trimCr(buf.subarray(start, i)));
        start = i + 1;
      }
      rest = start < buf.length ? buf.subarray(start) : null;
      if (lines.length > 0) yield lines;
    }
    if (rest && rest.length > 0) yield [trimCr(rest)];
  } finally {
    await reader.cancel().catch(() => {});
  }
}

/**
 * Drops the first `start` and the last `end` lines of a line sequence fed in batches: the last
 * `end` lines are held back in a ring until later lines push them out.
 */
export class LineWindow {
  private skipped = 0;
  private readonly ring: Uint8Array[];
  private held = 0;
  private at = 0;

  constructor(
    private readonly start: number,
    private readonly end: number,
  ) {
    this.ring = new Array<Uint8Array>(Math.max(0, end));
  }

  /** The lines of `batch` that are neither among the first `start` nor (yet) the last `end`. */
  feed(batch: Uint8Array[], out: Uint8Array[]): void {
    for (let i = 0; i < batch.length; i++) {
      const line = batch[i]!;
      if (this.skipped < this.start) {
        this.skipped++;
        continue;
      }
      if (this.end <= 0) {
        out.push(line);
        continue;
      }
      if (this.held === this.end) out.push(this.ring[this.at]!);
      else this.held++;
      this.ring[this.at] = line;
      this.at = (this.at + 1) % this.end;
    }
  }
}

const WS = new Set([0x20, 0x09, 0x0a, 0x0d]);

/**
 * The payloads of a JSON document: each element of a top-level array (sliced, not parsed:
 * the stream's decoder parses each), or the whole document when it is not an array.
 */
export function splitJsonArray(b: Uint8Array): Uint8Array[] {
  let i = 0;
  while (i < b.length && WS.has(b[i]!)) i++;
  if (i >= b.length) return [];
  if (b[i] !== 0x5b /* [ */) return [b];
  const out: Uint8Array[] = [];
  let depth = 0;
  let inStr = false;
  let start = -1;
  for (i = i + 1; i < b.length; i++) {
    const c = b[i]!;
    if (inStr) {
      if (c === 0x5c /* \ */) i++;
      else if (c === 0x22 /* " */) inStr = false;
      continue;
    }
    if (start < 0) {
      if (WS.has(c) || c === 0x2c /* , */) continue;
      if (c === 0x5d /* ] */ && depth === 0) return out;
      start = i;
    }
    if (c === 0x22) inStr = true;
    else if (c === 0x7b || c === 0x5b) depth++;
    else if (c === 0x7d || c === 0x5d) {
      if (depth === 0) {
        // the closing bracket of the array ends the last element
        out.push(b.subarray(start, i));
        return out;
      }
      depth--;
    } else if (c === 0x2c && depth === 0) {
      out.push(b.subarray(start, i));
      start = -1;
    }
  }
  if (start >= 0) out.push(b.subarray(start));
  return out;
}

/** Splits one csv line into fields; null when a quoted field continues on the next line. */
export function parseCsvRecord(text: string, delim: string): string[] | null {
  const fields: string[] = [];
  let i = 0;
  const n = text.length;
  for (;;) {
    if (text[i] === '"') {
      let v = "";
      i++;
      for (;;) {
        const q = text.indexOf('"', i);
        if (q < 0) return null;
        v += text.slice(i, q);
        if (text[q + 1] === '"') {
          v += '"';
          i = q + 2;
          continue;
        }
        i = q + 1;
        break;
      }
      // Lenient past the closing quote: text up to the delimiter is kept.
      const d = text.indexOf(delim, i);
      v += text.slice(i, d < 0 ? n : d);
      fields.push(v);
      if (d < 0) return fields;
      i = d + delim.length;
    } else {
      const d = text.indexOf(delim, i);
      fields.push(text.slice(i, d < 0 ? n : d));
      if (d < 0) return fields;
      i = d + delim.length;
    }
  }
}
