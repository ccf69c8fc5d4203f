import { describe, expect, test } from "bun:test";
import { RowError } from "../../lib/errors.ts";
import { DateTime, Duration, UTC } from "../../lib/value/time.ts";
import type { Value } from "../../lib/value/values.ts";
import { encodeGoJson } from "../../lib/value/json-encode.ts";

const cases: [label: string, v: Value, want: string][] = [
  ["null", null, "null"],
  ["bools", [true, false], "[true,false]"],
  ["int64 beyond 2^53 stays exact", 9007199254740993n, "9007199254740993"],
  ["min int64", -9223372036854775808n, "-9223372036854775808"],
  ["integral float has no fraction", 2, "2"],
  ["float", 25.5, "25.5"],
  ["negative zero keeps its sign", -0, "-0"],
  ["1e20 is plain", 1e20, "100000000000000000000"],
  ["1e21 switches to exponent", 1e21, "1e+21"],
  ["1e-6 is plain", 0.000001, "0.000001"],
  ["below 1e-6 drops the exponent's leading zero", 1e-7, "1e-7"],
  ["two-digit negative exponent", 1.5e-10, "1.5e-10"],
  ["three-digit exponent", 1e100, "1e+100"],
  ["smallest subnormal", 5e-324, "5e-324"],
  ["html characters", "<a&b>", '"\\u003ca\\u0026b\\u003e"'],
  ["line and paragraph separators", "\u2028\u2029", '"\\u2028\\u2029"'],
  ["short escapes", '"\\\n\r\t\b\f', '"\\"\\\\\\n\\r\\t\\b\\f"'],
  ["other controls", "\u0001\u001f", '"\\u0001\\u001f"'],
  ["DEL and non-ASCII pass through", "\u007fé日😀", '"\u007fé日😀"'],
  ["a lone surrogate is invalid UTF-8", "a\ud800b", '"a\ufffdb"'],
  ["bytes are base64", new TextEncoder().encode("hello"), '"aGVsbG8="'],
  ["empty bytes", new Uint8Array(0), '""'],
  ["duration is nanoseconds", new Duration(1500000000n), "1500000000"],
  ["datetime is RFC 3339 with trimmed nanos", new DateTime(1704164645600, 0, UTC), '"2024-01-02T03:04:05.6Z"'],
  ["keys sorted", { b: 1n, a: [1n, 2n], c: { z: null, y: "x" } }, '{"a":[1,2],"b":1,"c":{"y":"x","z":null}}'],
  ["keys sorted byte-wise", { "\u{1F600}": 1n, "\uff01": 2n, B: 3n, a: 4n }, '{"B":3,"a":4,"！":2,"😀":1}'],
  ["keys escaped", { "<k>": 1n }, '{"\\u003ck\\u003e":1}'],
  ["empty containers", { a: [], o: {} }, '{"a":[],"o":{}}'],
  ["row of safe int64s, floats and strings", { a: 9007199254740991n, b: -9007199254740991n, c: 1.5, d: "x", e: 0n }, '{"a":9007199254740991,"b":-9007199254740991,"c":1.5,"d":"x","e":0}'],
  ["row with int64 just past 2^53 - 1 stays exact", { a: 9007199254740992n, b: 9007199254740993n, c: -9007199254740993n }, '{"a":9007199254740992,"b":9007199254740993,"c":-9007199254740993}'],
  ["row with a safe int64 and a Go-escaped string", { a: 22n, b: "<&>" }, '{"a":22,"b":"\\u003c\\u0026\\u003e"}'],
  ["nested row of safe int64s", { o: { a: 22n, b: "x" }, p: [{ c: 1n }] }, '{"o":{"a":22,"b":"x"},"p":[{"c":1}]}'],
  ["a __proto__ key next to a safe int64 stays a key", JSON.parse('{"__proto__":null,"a":1}', (_k, v) => (typeof v === "number" ? BigInt(v) : v)), '{"__proto__":null,"a":1}'],
];

describe("encodeGoJson", () => {
  test.each(cases)("%s", (_label, v, want) => {
    expect(encodeGoJson(v)).toBe(want);
  });

  test.each([
    [NaN, "json: unsupported value: NaN"],
    [Infinity, "json: unsupported value: +Inf"],
    [[1n, { a: -Infinity }], "json: unsupported value: -Inf"],
  ] as [Value, string][])("%p cannot be encoded", (v, msg) => {
    let thrown: unknown;
    try {
      encodeGoJson(v);
    } catch (e) {
      thrown = e;
    }
    expect(thrown).toBeInstanceOf(RowError);
    expect((thrown as RowError).message).toBe(msg);
  });

  test("rows encoded one after another: each by its own keys, whatever shape came before", () => {
    // The encoder remembers the last row's shape; every value here follows one of another shape
    // (or the same keys in another order, or a non-plain object with those keys) and must not take it.
    class Pair {
      constructor(
        readonly a: Value,
        readonly b: Value,
      ) {}
    }
    const bytes = new TextEncoder().encode("21.4");
    const seq: [Value, string][] = [
      [{ b: bytes, a: "x" }, '{"a":"x","b":"MjEuNA=="}'],
      [{ b: bytes, a: "y" }, '{"a":"y","b":"MjEuNA=="}'],
      [{ a: "z", b: bytes }, '{"a":"z","b":"MjEuNA=="}'],
      [{ a: "z", b: "flat" }, '{"a":"z","b":"flat"}'],
      [{ a: "z", b: "<" }, '{"a":"z","b":"\\u003c"}'],
      [new Pair("p", 1n) as unknown as Value, '{"a":"p","b":1}'],
      [{ a: 1n }, '{"a":1}'],
      [{ a: 1n, b: 2n, c: 3n }, '{"a":1,"b":2,"c":3}'],
      [{ 0: "x", 1: "y" }, '{"0":"x","1":"y"}'],
      [["x", "y"], '["x","y"]'],
      [{ 0: "x", 1: "y" }, '{"0":"x","1":"y"}'],
      [new Uint8Array([1, 2]), '"AQI="'],
      [{ constructor: "c", a: 1n }, '{"a":1,"constructor":"c"}'],
      [{ constructor: "d", a: 2n }, '{"a":2,"constructor":"d"}'],
      [Object.assign(Object.create(null) as object, { a: 1n, b: 2n }) as Value, '{"a":1,"b":2}'],
      [{ a: 1n, b: NaN }, "NaN"],
      [{ a: 1n, b: 2n }, '{"a":1,"b":2}'],
      [{ a: 3n, b: "x" }, '{"a":3,"b":"x"}'],
      [{ a: 4n, b: "y" }, '{"a":4,"b":"y"}'],
      [{ a: 5.5, b: "z" }, '{"a":5.5,"b":"z"}'],
    ];
    for (const [v, want] of seq) {
      if (want === "NaN") expect(() => encodeGoJson(v)).toThrow("json: unsupported value: NaN");
      else expect(encodeGoJson(v)).toBe(want);
    }
  });

  test("finite floats match JavaScript's shortest form", () => {
    let seed = 7;
    const rnd = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);
    for (let i = 0; i < 2000; i++) {
      const x = (rnd() - 0.5) * Math.pow(10, Math.floor(rnd() * 60) - 30);
      const s = encodeGoJson(x);
      expect(Number(s)).toBe(x);
      expect(s).toBe(Object.is(x, -0) ? "-0" : String(x));
    }
  });
});

describe("encodeGoJson's last-row memo", () => {
  test("an equal row, another object, alone or as a one-row list, has the same text", () => {
    const a = { temp: 22.5, hum: 40, device: "d1", ok: true, n: null, big: 9007199254740993n };
    const want = '{"big":9007199254740993,"device":"d1","hum":40,"n":null,"ok":true,"temp":22.5}';
    expect(encodeGoJson(a)).toBe(want);
    expect(encodeGoJson({ ...a })).toBe(want);
    expect(encodeGoJson([{ ...a }])).toBe("[" + want + "]");
    expect(encodeGoJson([a])).toBe("[" + want + "]");
    expect(encodeGoJson({ ...a })).toBe(want);
  });

  test("a row is held by value: changed after it was encoded, it is encoded again", () => {
    const r: Record<string, Value> = { x: 1, y: "a" };
    expect(encodeGoJson([r])).toBe('[{"x":1,"y":"a"}]');
    r.x = 2;
    expect(encodeGoJson([r])).toBe('[{"x":2,"y":"a"}]');
    r.z = 0;
    expect(encodeGoJson(r)).toBe('{"x":2,"y":"a","z":0}');
    delete r.z;
    expect(encodeGoJson(r)).toBe('{"x":2,"y":"a"}');
  });

  test("values equal to === but not the same value, other key orders and nested values are not taken for the held row", () => {
    expect(encodeGoJson({ v: 0 })).toBe('{"v":0}');
    expect(encodeGoJson({ v: -0 })).toBe('{"v":-0}');
    expect(encodeGoJson({ v: 1n })).toBe('{"v":1}');
    expect(encodeGoJson({ v: 1.5 })).toBe('{"v":1.5}');
    expect(encodeGoJson({ a: 1, b: 2 })).toBe('{"a":1,"b":2}');
    expect(encodeGoJson({ b: 2, a: 1 })).toBe('{"a":1,"b":2}');
    const nested = { o: { k: 1 } };
    expect(encodeGoJson(nested)).toBe('{"o":{"k":1}}');
    nested.o.k = 2;
    expect(encodeGoJson(nested)).toBe('{"o":{"k":2}}');
    expect(encodeGoJson([{ a: 1 }, { a: 1 }])).toBe('[{"a":1},{"a":1}]');
    expect(encodeGoJson({ s: "<&>" })).toBe('{"s":"\\u003c\\u0026\\u003e"}');
    expect(encodeGoJson([{ s: "<&>" }])).toBe('[{"s":"\\u003c\\u0026\\u003e"}]');
  });

  test("a row that failed to encode is not held", () => {
    expect(() => encodeGoJson({ v: NaN })).toThrow(RowError);
    expect(() => encodeGoJson([{ v: NaN }])).toThrow(RowError);
  });
});

describe("encodeGoJson's held rows", () => {
  test("rows of a few projections, interleaved, each keep their own text", () => {
    const shapes = [(k: number) => ({ device: `d${k}`, hum: k, temp: k / 2 }), (k: number) => ({ device: `d${k}`, temp: k / 2 }), (k: number) => ({ device: `d${k}`, hum: k, t2: k })];
    for (let k = 0; k < 50; k++)
      for (let rule = 0; rule < 9; rule++) {
        const r = shapes[rule % 3]!(k % 7);
        expect(encodeGoJson(rule % 2 ? [r] : r)).toBe(rule % 2 ? "[" + JSON.stringify(r) + "]" : JSON.stringify(r));
      }
  });

  test("a row with a nested value, held over a flat one, leaves nothing half held", () => {
    expect(encodeGoJson({ a: 1, b: 2, c: 3 })).toBe('{"a":1,"b":2,"c":3}');
    for (let i = 0; i < 8; i++) expect(encodeGoJson({ a: 1, b: { x: i }, c: 3 })).toBe(`{"a":1,"b":{"x":${i}},"c":3}`);
    expect(encodeGoJson({ a: 1 })).toBe('{"a":1}');
    expect(encodeGoJson({ a: 1, b: 2, c: 3 })).toBe('{"a":1,"b":2,"c":3}');
  });
});
