/**
 * A replay envelope's `raw` → bytes (lib/value/base64.ts) is `Buffer.from(raw, "base64")`
 * byte for byte and as a Buffer, for canonical texts (decoded in a loop) and for everything Buffer
 * takes leniently (whitespace, the URL alphabet, missing or misplaced padding, stray characters).
 */
import { expect, test } from "bun:test";
import { bufferFromBase64 } from "../../lib/value/base64.ts";
import { prng } from "../helpers/prng.ts";

const same = (s: string) => {
  const got = bufferFromBase64(s);
  expect(Buffer.isBuffer(got)).toBe(true);
  expect([...got]).toEqual([...Buffer.from(s, "base64")]);
};

test("canonical base64 of every length 0..100 decodes to the bytes", () => {
  const rnd = prng(7);
  for (let n = 0; n <= 100; n++) {
    const b = Buffer.alloc(n);
    for (let i = 0; i < n; i++) b[i] = Math.floor(rnd() * 256);
    const s = b.toString("base64");
    expect([...bufferFromBase64(s)]).toEqual([...b]);
    same(s);
  }
});

test("lenient texts decode as Buffer decodes them", () => {
  const cases = ["", "=", "==", "====", "MjEuNA", "MjEuNA=", "MjEuNA==", "MjEuN===", "MjEu NA==", "MjEu\nNA==", "Mj=uNA==", "-_-_", "+/+/", "MjE=MjE=", "MjB=", "MjEuNB==", "é123", "Mj€u", "abc*", "A", "AB", "ABC"];
  for (const s of cases) same(s);
});

test("random texts over the alphabet, padding, whitespace and strays decode as Buffer decodes them", () => {
  const rnd = prng(3);
  const chars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=-_ \n*é";
  for (let k = 0; k < 5000; k++) {
    const n = Math.floor(rnd() * 24);
    let s = "";
    for (let i = 0; i < n; i++) s += chars[rnd() < 0.9 ? Math.floor(rnd() * 64) : 64 + Math.floor(rnd() * (chars.length - 64))];
    same(s);
  }
});

test("bytes decoded from a canonical text are encoded back as that text; other texts as the bytes' own base64", async () => {
  const { encodeBase64 } = await import("../../lib/value/go-base64.ts");
  const rnd = prng(5);
  const chars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  const kept: [Buffer, string][] = [];
  for (let k = 0; k < 5000; k++) {
    // Canonical texts, and texts whose last character before the padding has stray low bits (`MR==`).
    let s = "";
    const quads = 1 + Math.floor(rnd() * 4);
    for (let i = 0; i < quads * 4; i++) s += chars[Math.floor(rnd() * 64)];
    const pad = Math.floor(rnd() * 3);
    if (pad) s = s.slice(0, s.length - pad) + "=".repeat(pad);
    const b = bufferFromBase64(s);
    const want = Buffer.from(b).toString("base64");
    expect(encodeBase64(b)).toBe(want);
    kept.push([b, want]);
  }
  expect(encodeBase64(bufferFromBase64("MR=="))).toBe("MQ==");
  expect(encodeBase64(bufferFromBase64("MjEuNA=="))).toBe("MjEuNA==");
  // Bytes decoded earlier than the last still encode as themselves.
  for (const [b, want] of kept) expect(encodeBase64(b)).toBe(want);
});
