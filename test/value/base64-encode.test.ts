/**
 * Bytes → base64 (a loop up to 64 bytes, the native `toBase64` above) writes what Buffer's encoder wrote: standard
 * alphabet, padded, for every length, for views at an offset into a larger buffer (a sub-array of
 * a read buffer or of Buffer's pool), and inside Go JSON output.
 */
import { expect, test } from "bun:test";
import { encodeBase64 } from "../../lib/value/go-base64.ts";
import { encodeGoJson } from "../../lib/value/json-encode.ts";
import { prng } from "../helpers/prng.ts";

const reference = (b: Uint8Array) => Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString("base64");

test("every length 0..160 (both sides of the 64-byte switch), whole arrays and offset views, plain Uint8Array and Buffer", () => {
  const rnd = prng(11);
  for (let n = 0; n <= 160; n++) {
    const big = new Uint8Array(n + 16);
    for (let i = 0; i < big.length; i++) big[i] = Math.floor(rnd() * 256);
    for (const v of [big.subarray(0, n), big.subarray(7, 7 + n), Buffer.from(big.subarray(3, 3 + n)), Buffer.from(big).subarray(5, 5 + n)]) {
      expect(encodeBase64(v)).toBe(reference(v));
    }
  }
});

test("Go JSON encodes bytes as padded standard base64 (the '+' and '/' alphabet)", () => {
  const b = Uint8Array.from([0xfb, 0xff, 0xbf, 0x00, 0x3e]);
  expect(encodeGoJson({ self: b })).toBe('{"self":"+/+/AD4="}');
  expect(encodeGoJson([new Uint8Array(0), Buffer.from("21.4")])).toBe('["","MjEuNA=="]');
});
