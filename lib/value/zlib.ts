/**
 * node:zlib, loaded at its first use. Loading it costs about as much CPU as the rest of pipe mode's
 * start-up, and only what compresses or decompresses needs it: the compress/decompress/crc32
 * functions, source decompression, sink compression, schema zip uploads (start-up time).
 */
import type * as Zlib from "node:zlib";

let loaded: typeof Zlib | undefined;

export function zlib(): typeof Zlib {
  return (loaded ??= require("node:zlib") as typeof Zlib);
}
