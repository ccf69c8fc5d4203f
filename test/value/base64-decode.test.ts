/**
 * A replay envelope's `raw` → bytes (lib/value/base64.ts, issue 11) is `Buffer.from(raw, "base64")`
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
