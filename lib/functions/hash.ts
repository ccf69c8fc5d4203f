/**
 * Hashing and compression functions (functions §13): digests of the UTF-8 bytes of `toStr(x)` as
 * lower-case hex, CRC-32 unpadded, and compress/decompress with a method fixed per call site.
 */
import { RowError } from "../errors.ts";
import { fmtV, toStr, type Value } from "../value/values.ts";
import { zlib } from "../value/zlib.ts";
import { codecInput, compressor, decompressor } from "./compress.ts";
import { register, STRING, validateArgs, type CallCtx, type FuncDef } from "./registry.ts";

const S1 = validateArgs(1, [STRING]);
const S2 = validateArgs(2, [STRING, STRING]);

type Algorithm = "md5" | "sha1" | "sha256" | "sha384" | "sha512";

function digest(name: Algorithm): FuncDef {
  return {
    name,
    kind: "scalar",
    validate: S1,
    policy: "N",
    exec: (args) => Bun.CryptoHasher.hash(name, toStr(args[0]), "hex"),
  };
}

interface CodecState {
  method: string;
}

/** compress/decompress: the first successful call at a call site fixes the method. */
function codec(
  name: "compress" | "decompress",
  lookup: (m: string) => ((b: Uint8Array) => Uint8Array) | undefined,
  unsupported: string,
): FuncDef {
  return {
    name,
    kind: "scalar",
    validate: S2,
    exec: (args: Value[], ctx: CallCtx) => {
      const x = args[0]!;
      if (x === null) return null;
      const data = codecInput(x, fmtV(x));
      const method = toStr(args[1]);
      const state = ctx.state as CodecState | undefined;
      if (state !== undefined && state.method !== method)
        throw new RowError(`${name} type must be consistent, previous ${state.method}, now ${method}`);
      const run = lookup(method);
      if (!run) throw new RowError(`${unsupported}: ${method}`);
      ctx.state ??= { method } satisfies CodecState;
      return run(data);
    },
  };
}

register(
  digest("md5"),
  digest("sha1"),
  digest("sha256"),
  digest("sha384"),
  digest("sha512"),
  {
    name: "crc32",
    kind: "scalar",
    validate: S1,
    policy: "N",
    exec: (args) => zlib().crc32(toStr(args[0])).toString(16),
  },
  codec("compress", compressor, "unsupported compressor"),
  codec("decompress", decompressor, "unsupported decompressor"),
);
