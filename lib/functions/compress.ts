/**
 * The codecs of `compress`/`decompress` (functions §13): zlib, gzip, flate (raw deflate), zstd.
 * eKuiper writes with klauspost/compress at the default level; for inputs under 128 bytes that
 * writer emits stored blocks, reproduced byte for byte here. Larger inputs use node:zlib's deflate,
 * which differs in bytes but decodes the same. Decoding errors carry Go's texts.
 */
import { RowError } from "../errors.ts";
import { zlib } from "../value/zlib.ts";

const enc = new TextEncoder();

/** Optimal Huffman code cost (bits) of the frequencies; the trees involved are never > 15 deep. */
function huffmanBits(freq: number[]): number {
  const w = freq.filter((f) => f > 0).sort((a, b) => a - b);
  if (w.length <= 2) return w.reduce((s, f) => s + f, 0);
  // Two-queue Huffman construction over the sorted weights.
  const merged: number[] = [];
  let i = 0;
  let j = 0;
  let cost = 0;
  const take = () => (j >= merged.length || (i < w.length && w[i]! <= merged[j]!) ? w[i++]! : merged[j++]!);
  for (let n = w.length; n > 1; n--) {
    const s = take() + take();
    cost += s;
    merged.push(s);
  }
  return cost;
}

/** klauspost `writeBlockHuff`'s choice for a first block: store when Huffman saves too little. */
function storedWins(data: Uint8Array): boolean {
  const freq = new Array<number>(257).fill(0);
  for (const b of data) freq[b]!++;
  freq[256] = 1; // end of block
  let est = huffmanBits(freq) + 70 * 8; // klauspost guesses a 70-byte header
  est += est >> 7; // logNewTablePenalty of levels 1–6
  return (data.length + 5) * 8 <= est;
}

/** Raw deflate as klauspost's default-level writer produces it (exact below 128 bytes). */
function deflateRaw(data: Uint8Array): Uint8Array {
  const n = data.length;
  // The final block of klauspost's Close: an empty fixed-Huffman block (BFINAL, BTYPE=01, EOB).
  const end = [0x03, 0x00];
  if (n === 0) return Uint8Array.from(end);
  if (n < 128 && (n <= 32 || storedWins(data))) {
    const out = new Uint8Array(5 + n + 2);
    out.set([0x00, n & 0xff, n >> 8, ~n & 0xff, (~n >> 8) & 0xff]);
    out.set(data, 5);
    out.set(end, 5 + n);
    return out;
  }
  return zlib().deflateRawSync(data);
}

function adler32(b: Uint8Array): number {
  let a = 1;
  let s = 0;
  for (let i = 0; i < b.length; ) {
    const stop = Math.min(b.length, i + 5552);
    for (; i < stop; i++) {
      a += b[i]!;
      s += a;
    }
    a %= 65521;
    s %= 65521;
  }
  return ((s << 16) | a) >>> 0;
}

function concat(parts: Uint8Array[]): Uint8Array {
  let len = 0;
  for (const p of parts) len += p.length;
  const out = new Uint8Array(len);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

function u32(v: number, littleEndian: boolean): Uint8Array {
  const b = new Uint8Array(4);
  new DataView(b.buffer).setUint32(0, v >>> 0, littleEndian);
  return b;
}

const COMPRESSORS: Record<string, (b: Uint8Array) => Uint8Array> = {
  flate: deflateRaw,
  zlib: (b) => concat([Uint8Array.of(0x78, 0x9c), deflateRaw(b), u32(adler32(b), false)]),
  gzip: (b) =>
    concat([
      Uint8Array.of(0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff),
      deflateRaw(b),
      u32(zlib().crc32(b), true),
      u32(b.length, true),
    ]),
  zstd: (b) => new Uint8Array(zlib().zstdCompressSync(b)),
};

/** Go's texts for the failures node:zlib reports. */
function inflateError(e: unknown, checksum: string, streamLength: number): RowError {
  const msg = e instanceof Error ? e.message : String(e);
  if (/unexpected end of file/.test(msg)) return new RowError("unexpected EOF");
  if (/incorrect (data|length) check/.test(msg)) return new RowError(checksum);
  // Go names the byte offset where its decoder stopped; node:zlib does not report it.
  return new RowError(`flate: corrupt input before offset ${streamLength}`);
}

function inflateRaw(b: Uint8Array): Uint8Array {
  try {
    return new Uint8Array(zlib().inflateRawSync(b));
  } catch (e) {
    throw inflateError(e, "flate: corrupt input", b.length);
  }
}

const DECOMPRESSORS: Record<string, (b: Uint8Array) => Uint8Array> = {
  flate: inflateRaw,
  zlib: (b) => {
    if (b.length === 0) throw new RowError("EOF");
    if (b.length < 2) throw new RowError("unexpected EOF");
    if ((b[0]! & 0x0f) !== 8 || b[0]! >> 4 > 7 || ((b[0]! << 8) | b[1]!) % 31 !== 0)
      throw new RowError("zlib: invalid header");
    if (b[1]! & 0x20) {
      if (b.length < 6) throw new RowError("unexpected EOF");
      throw new RowError("zlib: invalid dictionary");
    }
    try {
      return new Uint8Array(zlib().inflateSync(b));
    } catch (e) {
      throw inflateError(e, "zlib: invalid checksum", b.length - 2);
    }
  },
  gzip: (b) => {
    if (b.length === 0) throw new RowError("EOF");
    if (b.length < 10) throw new RowError("unexpected EOF");
    if (b[0] !== 0x1f || b[1] !== 0x8b || b[2] !== 8) throw new RowError("gzip: invalid header");
    try {
      return new Uint8Array(zlib().gunzipSync(b));
    } catch (e) {
      throw inflateError(e, "gzip: invalid checksum", b.length - 10);
    }
  },
  zstd: (b) => {
    try {
      return new Uint8Array(zlib().zstdDecompressSync(b));
    } catch (e) {
      throw new RowError(e instanceof Error ? e.message : String(e));
    }
  },
};

/** Bytes of a compress/decompress argument: a string's UTF-8 or bytea; else eKuiper's error. */
export function codecInput(x: unknown, shown: string): Uint8Array {
  if (typeof x === "string") return enc.encode(x);
  if (x instanceof Uint8Array) return x;
  throw new RowError(`require string or bytea parameter, but got ${shown}`);
}

export function compressor(method: string): ((b: Uint8Array) => Uint8Array) | undefined {
  return Object.hasOwn(COMPRESSORS, method) ? COMPRESSORS[method] : undefined;
}

export function decompressor(method: string): ((b: Uint8Array) => Uint8Array) | undefined {
  return Object.hasOwn(DECOMPRESSORS, method) ? DECOMPRESSORS[method] : undefined;
}
