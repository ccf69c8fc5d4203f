/** The zip reader of schema uploads: stored and deflated entries, and its refusals. */
import { expect, test } from "bun:test";
import { isZip, readZip } from "../../lib/formats/zip.ts";
import { makeZip } from "../helpers/zip.ts";

test("stored and deflated entries read back; directories are left out", () => {
  const z = makeZip([
    { name: "a.proto", text: "syntax = \"proto3\";" },
    { name: "dir/", text: "" },
    { name: "b.proto", text: "message B { int32 x = 1; }".repeat(20), deflate: true },
  ]);
  expect(isZip(z)).toBe(true);
  expect(readZip(z).map((e) => [e.name, new TextDecoder().decode(e.data)])).toEqual([
    ["a.proto", "syntax = \"proto3\";"],
    ["b.proto", "message B { int32 x = 1; }".repeat(20)],
  ]);
});

test("what cannot be read safely is refused", () => {
  expect(isZip(new TextEncoder().encode("syntax"))).toBe(false);
  expect(() => readZip(new Uint8Array(30))).toThrow("invalid zip archive: no end of central directory");
  expect(() => readZip(makeZip([{ name: "a", text: "x", flags: 1 }]))).toThrow("invalid zip archive: a is encrypted");
  const many = makeZip(Array.from({ length: 5 }, (_, i) => ({ name: `f${i}`, text: "x" })));
  expect(() => readZip(many, { maxEntries: 4, maxBytes: 100 })).toThrow("invalid zip archive: more than 4 entries");
  // A bomb: 1 MiB of zeros deflates to about a kilobyte; the declared size caps what is inflated.
  const bomb = makeZip([{ name: "z", text: "\0".repeat(1 << 20), deflate: true }]);
  expect(bomb.length).toBeLessThan(4096);
  expect(() => readZip(bomb, { maxEntries: 4, maxBytes: 1 << 16 })).toThrow("invalid zip archive: more than 65536 bytes inflated");
  const lying = bomb.slice();
  // The central directory claims 10 bytes: inflating stops there and the entry is refused.
  new DataView(lying.buffer).setUint32(lying.length - 22 - 46 - 1 + 24, 10, true);
  expect(() => readZip(lying)).toThrow(/invalid zip archive: z/);
  expect(() => readZip(makeZip([{ name: "a", text: "x" }]).slice(0, -30))).toThrow("invalid zip archive");
});
