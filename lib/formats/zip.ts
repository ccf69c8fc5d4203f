/**
 * Reads the files of a zip archive (stored or deflated entries, no encryption, no zip64): what a
 * protobuf schema upload may send, the .proto with its imports (rest-api.md §14.4). Bounded: at
 * most `maxEntries` files and `maxBytes` inflated in total, so a small archive cannot inflate
 * into an unbounded buffer.
 */
import { zlib } from "../value/zlib.ts";
import { EngineError, ErrCode, errorText } from "../errors.ts";

export interface ZipEntry {
  /** The path inside the archive (`/`-separated). */
  readonly name: string;
  readonly data: Uint8Array;
}

const EOCD = 0x06054b50;
const CENTRAL = 0x02014b50;
const LOCAL = 0x04034b50;

/** Whether `b` starts like a zip archive (a local file header, or an empty archive's end record). */
export function isZip(b: Uint8Array): boolean {
  return b.length >= 4 && b[0] === 0x50 && b[1] === 0x4b && ((b[2] === 3 && b[3] === 4) || (b[2] === 5 && b[3] === 6));
}

function bad(why: string): EngineError {
  return new EngineError(`invalid zip archive: ${why}`, ErrCode.undefined);
}

/** The archive's files (directories left out); throws EngineError for what it cannot read. */
export function readZip(b: Uint8Array, limits: { maxEntries: number; maxBytes: number } = { maxEntries: 256, maxBytes: 16 << 20 }): ZipEntry[] {
  const v = new DataView(b.buffer, b.byteOffset, b.byteLength);
  const u32 = (o: number) => {
    if (o < 0 || o + 4 > b.length) throw bad("truncated");
    return v.getUint32(o, true);
  };
  const u16 = (o: number) => {
    if (o < 0 || o + 2 > b.length) throw bad("truncated");
    return v.getUint16(o, true);
  };
  // The end record sits in the last 22 bytes plus a comment of at most 64 KiB.
  let end = -1;
  for (let o = b.length - 22; o >= Math.max(0, b.length - 22 - 0xffff); o--) {
    if (v.getUint32(o, true) === EOCD) {
      end = o;
      break;
    }
  }
  if (end < 0) throw bad("no end of central directory");
  const count = u16(end + 10);
  if (count > limits.maxEntries) throw bad(`more than ${limits.maxEntries} entries`);
  let p = u32(end + 16);
  const out: ZipEntry[] = [];
  let total = 0;
  const names = new TextDecoder();
  for (let i = 0; i < count; i++) {
    if (u32(p) !== CENTRAL) throw bad("broken central directory");
    const flags = u16(p + 8);
    const method = u16(p + 10);
    const size = u32(p + 20);
    const raw = u32(p + 24);
    const nameLen = u16(p + 28);
    const next = p + 46 + nameLen + u16(p + 30) + u16(p + 32);
    const local = u32(p + 42);
    if (p + 46 + nameLen > b.length) throw bad("truncated");
    const name = names.decode(b.subarray(p + 46, p + 46 + nameLen));
    p = next;
    if (name.endsWith("/")) continue;
    if (flags & 1) throw bad(`${name} is encrypted`);
    if (size === 0xffffffff || raw === 0xffffffff) throw bad(`${name} needs zip64`);
    total += raw;
    if (total > limits.maxBytes) throw bad(`more than ${limits.maxBytes} bytes inflated`);
    if (u32(local) !== LOCAL) throw bad(`broken local header of ${name}`);
    const start = local + 30 + u16(local + 26) + u16(local + 28);
    if (start + size > b.length) throw bad(`${name} is truncated`);
    const packed = b.subarray(start, start + size);
    let data: Uint8Array;
    if (method === 0) data = packed;
    else if (method === 8) {
      try {
        data = zlib().inflateRawSync(packed, { maxOutputLength: Math.max(1, raw) });
      } catch (e) {
        throw bad(`${name}: ${errorText(e)}`);
      }
    } else throw bad(`${name} uses compression method ${method} (only stored and deflate are read)`);
    if (data.length !== raw) throw bad(`${name} inflates to ${data.length} bytes, not ${raw}`);
    out.push({ name, data });
  }
  return out;
}
