import { describe, expect, test } from "bun:test";
import { gunzipSync, inflateRawSync, inflateSync } from "node:zlib";
import { invoke, lookupBuiltin } from "../../lib/functions/index.ts";
import { RowError } from "../../lib/errors.ts";
import type { Value } from "../../lib/value/values.ts";
import { ctxFor } from "./env.ts";
import { decodeValue } from "./tagged-values.ts";
import cases from "../../fixtures/functions/hash.json";

interface Case {
  fn: string;
  args: unknown[];
  want?: unknown;
  err?: string;
}

function errorOf(f: () => unknown): string | undefined {
  try {
    f();
    return undefined;
  } catch (e) {
    if (e instanceof RowError) return e.message;
    throw e;
  }
}

describe("hash and compression functions", () => {
  test.each((cases as Case[]).map((c) => [`${c.fn}(${JSON.stringify(c.args).slice(1, 60)})`, c] as const))(
    "%s",
    (_l, c) => {
      const run = () => invoke(lookupBuiltin(c.fn)!, c.args.map(decodeValue), ctxFor(c.fn));
      if (c.err !== undefined) expect(errorOf(run)).toBe(c.err);
      else expect(run()).toEqual(decodeValue(c.want));
    },
  );
});

describe("compress/decompress state per call site", () => {
  test("the first successful method is fixed for later rows", () => {
    const def = lookupBuiltin("compress")!;
    const ctx = ctxFor("compress");
    const call = (x: string, m: string) => () => invoke(def, [x, m], ctx);
    expect(errorOf(call("foo", "bar"))).toBe("call func compress error: unsupported compressor: bar");
    expect(Buffer.from(call("hello world", "zlib")() as Uint8Array).toString("base64")).toBe(
      "eJwACwD0/2hlbGxvIHdvcmxkAwAaCwRd",
    );
    expect(errorOf(call("x", "gzip"))).toBe(
      "call func compress error: compress type must be consistent, previous zlib, now gzip",
    );
    expect(call("hello world", "zlib")()).toBeInstanceOf(Uint8Array);
  });

  test("decompress has its own wording", () => {
    const def = lookupBuiltin("decompress")!;
    const ctx = ctxFor("decompress");
    const packed = invoke(lookupBuiltin("compress")!, ["abc", "gzip"], ctxFor("compress"));
    expect(invoke(def, [packed, "gzip"], ctx)).toEqual(new TextEncoder().encode("abc"));
    expect(errorOf(() => invoke(def, [packed, "zlib"], ctx))).toBe(
      "call func decompress error: decompress type must be consistent, previous gzip, now zlib",
    );
  });
});

describe("compressed bytes decode with standard tools", () => {
  const text = JSON.stringify(Array.from({ length: 200 }, (_, i) => ({ id: i, name: `device-${i % 7}` })));
  const inputs: [string, string][] = [
    ["short", "hello world"],
    ["repetitive 100 bytes", "a".repeat(100)],
    ["long JSON", text],
  ];
  const standard: Record<string, (b: Uint8Array) => Uint8Array> = {
    zlib: (b) => inflateSync(b),
    gzip: (b) => gunzipSync(b),
    flate: (b) => inflateRawSync(b),
  };
  for (const method of ["zlib", "gzip", "flate", "zstd"]) {
    test.each(inputs)(`${method}: %s`, (_n, s) => {
      const packed = invoke(lookupBuiltin("compress")!, [s, method], ctxFor("compress")) as Uint8Array;
      const back = invoke(lookupBuiltin("decompress")!, [packed, method], ctxFor("decompress")) as Value;
      expect(new TextDecoder().decode(back as Uint8Array)).toBe(s);
      const tool = standard[method];
      if (tool) expect(new TextDecoder().decode(tool(packed))).toBe(s);
    });
  }
});
