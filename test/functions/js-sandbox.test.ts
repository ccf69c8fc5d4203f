/**
 * The JavaScript UDF sandbox (QuickJS in WebAssembly): no way out to the host through globals,
 * arguments, constructors, `import()` or the prototypes; a time limit per call and per script
 * load (pending jobs included); a memory limit per UDF; values cross with floe's int/float split.
 */
import { beforeAll, expect, test } from "bun:test";
import { createFunctionRegistry } from "../../lib/functions/index.ts";
import { createSandbox, loadSandbox, type Sandbox, type SandboxLimits } from "../../lib/functions/js-sandbox.ts";
import { registerScript, unregisterScript } from "../../lib/functions/js-udf.ts";
import { invoke } from "../../lib/functions/invoke.ts";
import type { CallCtx } from "../../lib/functions/registry.ts";
import { DateTime, Duration, UTC } from "../../lib/value/time.ts";
import type { Value } from "../../lib/value/values.ts";
import { waitFor } from "../helpers/runtime.ts";

const functions = createFunctionRegistry();

const LIMITS: SandboxLimits = { timeoutMs: 50, memoryBytes: 32 * 1024 * 1024 };

beforeAll(async () => {
  await loadSandbox();
});

function box(name: string, script: string, limits = LIMITS): Promise<Sandbox> {
  return createSandbox(name, script, limits);
}

/** Calls `fn` and returns the error text it throws (fails when it does not throw). */
function errorOf(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    return e instanceof Error ? e.message : String(e);
  }
  throw new Error("expected an error");
}

/** The error text of a failing script load, and how long the load took. */
async function loadError(name: string, script: string): Promise<{ msg: string; ms: number }> {
  const t = performance.now();
  const msg = await box(name, script).then(
    () => {
      throw new Error("expected an error");
    },
    (e: unknown) => (e instanceof Error ? e.message : String(e)),
  );
  return { msg, ms: performance.now() - t };
}

const HOST_NAMES = ["process", "Bun", "require", "module", "exports", "fetch", "XMLHttpRequest", "WebSocket", "setTimeout", "setInterval", "queueMicrotask", "console", "std", "os", "Deno", "navigator", "Buffer", "global", "__dirname"];

test("the sandbox's globals are the ECMAScript built-ins only", async () => {
  const b = await box("names", "function names() { return Object.getOwnPropertyNames(globalThis).concat(Object.getOwnPropertyNames(this)); }");
  const names = b.call([]) as string[];
  expect(names).toContain("JSON");
  for (const n of HOST_NAMES) expect(names).not.toContain(n);
  const t = await box("kinds", `function kinds() { return [${HOST_NAMES.map((n) => `typeof ${n}`).join(",")}]; }`);
  expect(t.call([])).toEqual(HOST_NAMES.map(() => "undefined"));
});

test("an argument's constructor leads to the sandbox's Function, not the engine's", async () => {
  const b = await box(
    "esc",
    `function esc(o, a, s, n) {
      return [
        o.constructor.constructor("return typeof process")(),
        a.constructor.constructor("return typeof Bun")(),
        s.constructor.constructor("return typeof require")(),
        n.constructor.constructor("return typeof fetch")(),
        o.constructor.constructor("return Object.getOwnPropertyNames(this).indexOf('process')")(),
        Object.getPrototypeOf(o) === Object.prototype,
      ];
    }`,
  );
  const arg = { k: 1n, nested: { deep: [1.5] } };
  expect(b.call([arg, [1n, 2n], "s", 3n])).toEqual(["undefined", "undefined", "undefined", "undefined", -1n, true]);
});

test("Function, eval, import() and require reach nothing", async () => {
  const b = await box(
    "fns",
    `var loaded = "pending";
    import("node:fs").then(function (m) { loaded = typeof m.readFileSync; }, function (e) { loaded = "rejected: " + e.message; });
    function fns() {
      return [Function("return typeof process")(), eval("typeof Bun"), (0, eval)("typeof this.require"), loaded];
    }`,
  );
  const r = b.call([]) as string[];
  expect(r.slice(0, 3)).toEqual(["undefined", "undefined", "undefined"]);
  expect(r[3]).toStartWith("rejected: ");
  const req = await box("req", "function req() { return require('node:child_process'); }");
  expect(errorOf(() => req.call([]))).toContain("require");
});

test("prototype pollution stays inside the sandbox: the engine's objects and the arguments are untouched", async () => {
  const b = await box(
    "pol",
    `function pol(o, a) {
      Object.prototype.polluted = "yes";
      Array.prototype.push = function () { return -1; };
      o.__proto__.viaArg = "yes";
      Object.getPrototypeOf(a).viaArray = "yes";
      o.k = 99; a[0] = 99; o.nested.x = 99;
      JSON.parse = function () { return "hijacked"; };
      JSON.stringify = function () { return "hijacked"; };
      return { seen: ({}).polluted, k: o.k };
    }`,
  );
  const o = { k: 1n, nested: { x: 1n } };
  const a: Value[] = [1n];
  expect(b.call([o, a])).toEqual({ seen: "yes", k: 99n });
  // Again, with the sandbox's JSON replaced: the helpers captured the originals before the script ran.
  expect(b.call([o, a])).toEqual({ seen: "yes", k: 99n });
  expect(o).toEqual({ k: 1n, nested: { x: 1n } });
  expect(a).toEqual([1n]);
  const probe: Record<string, unknown> = {};
  expect([probe.polluted, probe.viaArg, ([] as unknown as Record<string, unknown>).viaArray]).toEqual([undefined, undefined, undefined]);
  const arr: number[] = [];
  expect(arr.push(1)).toBe(1);
});

test("a __proto__ key crosses as a plain key both ways", async () => {
  const b = await box("echo", "function echo(v) { return v; }");
  const arg = JSON.parse('{"__proto__": {"polluted": 1}, "a": 1}') as Value;
  const r = b.call([arg]) as Record<string, unknown>;
  expect(Object.getPrototypeOf(r)).toBe(Object.prototype);
  expect(Object.keys(r)).toEqual(["__proto__", "a"]);
  expect(({} as Record<string, unknown>).polluted).toBeUndefined();
});

test("values cross with floe's int/float split", async () => {
  const echo = await box("echo", "function echo(v) { return v; }");
  expect(echo.call([2n])).toBe(2n);
  expect(echo.call([2.5])).toBe(2.5);
  expect(echo.call([2.0])).toBe(2n);
  expect(echo.call([1e20])).toBe(1e20);
  expect(echo.call(["héllo \u0000 \ud83d\ude00"])).toBe("héllo \u0000 \ud83d\ude00");
  expect(echo.call(["\u0000lead"])).toBe("\u0000lead");
  expect(echo.call([true])).toBe(true);
  expect(echo.call([false])).toBe(false);
  expect(echo.call([null])).toBe(null);
  expect(echo.call([{ a: 1n, b: [1.5, "x", true, null, { c: -3n }], "\u0000k": "\u0000v" }])).toEqual({ a: 1n, b: [1.5, "x", true, null, { c: -3n }], "\u0000k": "\u0000v" });
  expect(echo.call([new Uint8Array([1, 2, 255])])).toEqual([1n, 2n, 255n]);
  expect(echo.call([new DateTime(1700000000123, 0, UTC)])).toBe(1700000000123n);
  expect(echo.call([new Duration(1500000000n)])).toBe(1500000000n);
  const kinds = await box("kinds", "function kinds(a, b, o) { return [typeof a, Number.isNaN(b), o.x === Infinity, o.y === -Infinity, Number.isNaN(o.z)]; }");
  expect(kinds.call([1n, NaN, { x: Infinity, y: -Infinity, z: NaN }])).toEqual(["number", true, true, true, true]);
  const misc = await box("misc", "function misc(k) { switch (k) { case 0: return undefined; case 1: return 12345678901234567890n; case 2: return [undefined, 1]; case 3: return {a: undefined}; } }");
  expect(misc.call([0n])).toBe(null);
  expect(misc.call([1n])).toBe(BigInt.asIntN(64, 12345678901234567890n));
  expect(misc.call([2n])).toEqual([null, 1n]);
  expect(misc.call([3n])).toEqual({ a: null });
});

test("results eKuiper refuses are errors: NaN, ±Inf (also nested), functions, cycles", async () => {
  const b = await box(
    "bad",
    `function bad(k) {
      switch (k) {
        case 0: return NaN;
        case 1: return 1 / 0;
        case 2: return { a: [-1 / 0] };
        case 3: return function () {};
        case 4: return { f: function () {} };
        case 5: var o = {}; o.self = o; return o;
      }
    }`,
  );
  expect(errorOf(() => b.call([0n]))).toBe("result is NaN");
  expect(errorOf(() => b.call([1n]))).toBe("result is Infinity");
  expect(errorOf(() => b.call([2n]))).toBe("result is -Infinity");
  expect(errorOf(() => b.call([3n]))).toBe("unsupported result type function");
  expect(errorOf(() => b.call([4n]))).toBe("unsupported result type function");
  expect(errorOf(() => b.call([5n]))).toContain("circular");
});

test("an infinite loop is stopped at the time limit, even when it catches; the UDF stays usable", async () => {
  const b = await box("spin", "var calls = 0; function spin(x) { calls++; if (x === 1) while (true) {} if (x === 2) while (true) { try { while (true) {} } catch (e) {} } return calls; }");
  expect(b.call([0n])).toBe(1n);
  for (const x of [1n, 2n]) {
    const t = performance.now();
    expect(errorOf(() => b.call([x]))).toBe("time limit of 50ms exceeded");
    expect(performance.now() - t).toBeLessThan(1000);
  }
  // After a breach the runtime is rebuilt: the script is loaded again and its globals start over.
  expect(b.call([0n])).toBe(1n);
  expect(b.call([0n])).toBe(2n);
});

test("a getter or a promise loop in the result is under the same limit", async () => {
  const g = await box("g", "function g() { return { get x() { while (true) {} } }; }");
  expect(errorOf(() => g.call([]))).toBe("time limit of 50ms exceeded");
  const p = await box("p", "function p() { Promise.resolve().then(function l() { Promise.resolve().then(l); }); return 1; }");
  expect(errorOf(() => p.call([]))).toBe("time limit of 50ms exceeded");
});

test("script load runs under the limits: top-level loops and microtask loops fail the load", async () => {
  for (const script of [
    "while (true) {} function f() {}",
    "Promise.resolve().then(function l() { Promise.resolve().then(l); }); function f() { return 1; }",
    "(async function () { for (;;) await null; })(); function f() { return 1; }",
    'var a = []; for (;;) a.push("y".repeat(1 << 20) + a.length); function f() {}',
  ]) {
    const { msg, ms } = await loadError("f", script);
    expect(msg).toMatch(/^(time limit of 50ms exceeded|memory limit of 32 MiB exceeded)$/);
    expect(ms).toBeLessThan(2000);
  }
  expect((await loadError("f", "function f( {")).msg).toBe("invalid property name");
  expect((await loadError("f", "function g() {}")).msg).toBe("function f is not defined in the script");
});

test("a 1 GB allocation fails at the memory limit and the UDF stays usable", async () => {
  const b = await box(
    "big",
    `function big(k) {
      if (k === 0) return new ArrayBuffer(1024 * 1024 * 1024).byteLength;
      if (k === 1) return "x".repeat(512 * 1024 * 1024).length;
      if (k === 2) { var a = []; for (;;) a.push("y".repeat(1024 * 1024) + a.length); }
      if (k === 3) return new Array(1024 * 1024 * 1024).fill(0).length;
      return "fine";
    }`,
  );
  for (const k of [0n, 1n, 2n]) expect(errorOf(() => b.call([k]))).toMatch(/^(memory limit of 32 MiB exceeded|time limit of 50ms exceeded)$/);
  expect(errorOf(() => b.call([3n]))).toBe("array length exceeds the sandbox limit of 4194304");
  expect(errorOf(() => b.call([0n]))).toBe("memory limit of 32 MiB exceeded");
  expect(b.call([9n])).toBe("fine");
});

test("the memory limit is per UDF and configurable", async () => {
  const script = "function alloc(n) { return new Uint8Array(n * 1024 * 1024).length; }";
  // A time limit that a 48 MiB fill cannot reach: this test is about memory.
  const small = await box("alloc", script, { timeoutMs: 5000, memoryBytes: 32 * 1024 * 1024 });
  const large = await box("alloc", script, { timeoutMs: 5000, memoryBytes: 96 * 1024 * 1024 });
  expect(errorOf(() => small.call([48n]))).toBe("memory limit of 32 MiB exceeded");
  expect(large.call([48n])).toBe(48n * 1024n * 1024n);
  small.dispose();
  large.dispose();
});

test("deep recursion is a stack error, not a crash", async () => {
  const b = await box("rec", "function rec(n) { return n === 0 ? 0 : 1 + rec(n - 1); }");
  expect(b.call([100n])).toBe(100n);
  expect(errorOf(() => b.call([10_000_000n]))).toMatch(/stack overflow|time limit/);
  expect(b.call([3n])).toBe(3n);
});

test("array methods over a length no dense array can have are refused, not run for minutes in C", async () => {
  const b = await box(
    "sparse",
    `function sparse(k) {
      if (k === 0) return Array(1e9).indexOf(1);
      if (k === 1) return Array.prototype.includes.call({ length: Math.pow(2, 53) - 1 }, 1);
      if (k === 2) { var n = 0; Array(1e8).forEach(function () { n++; }); return n; }
      return [3, 1, 2].sort().concat([4]).indexOf(4);
    }`,
  );
  for (const k of [0n, 1n, 2n]) {
    const t = performance.now();
    expect(errorOf(() => b.call([k]))).toBe("array length exceeds the sandbox limit of 4194304");
    expect(performance.now() - t).toBeLessThan(1000);
  }
  expect(b.call([3n])).toBe(3n);
});

test("a sandbox disposes cleanly after every kind of call, and others keep working", async () => {
  const b = await box("mix", "function mix(k, o) { if (k === 1) while (true) {} if (k === 2) throw new Error('x'); if (k === 3) return new ArrayBuffer(1 << 30); return [k, o, 'é']; }");
  expect(b.call([0n, { a: [1.5] }])).toEqual([0n, { a: [1.5] }, "é"]);
  expect(errorOf(() => b.call([1n, null]))).toBe("time limit of 50ms exceeded");
  expect(errorOf(() => b.call([2n, "s"]))).toBe("x");
  expect(errorOf(() => b.call([3n, true]))).toBe("memory limit of 32 MiB exceeded");
  expect(b.call([0n, "\u0000z"])).toEqual([0n, "\u0000z", "é"]);
  b.dispose();
  expect((await box("after", "function after(x) { return x * 2; }")).call([21n])).toBe(42n);
});

test("a loop of long calls into C built-ins is stopped near the limit (QuickJS's poll interval is shortened)", async () => {
  const b = await box("scan", 'var s = "x".repeat(8 * 1024 * 1024); function scan() { var n = 0; for (;;) n += s.indexOf("zz") + s.lastIndexOf("y"); }');
  const t = performance.now();
  expect(errorOf(() => b.call([]))).toBe("time limit of 50ms exceeded");
  expect(performance.now() - t).toBeLessThan(1500);
});

test("source nested past the host's stack faults that UDF's instance only: it answers its next call at once, other UDFs keep their state", async () => {
  const other = await box("other", "var calls = 0; function other(x) { calls++; return x + calls; }");
  expect(other.call([10n])).toBe(11n);
  const deep = await box("deep", 'var calls = 0; function deep(n) { calls++; return n < 0 ? calls : eval("(".repeat(n) + "1" + ")".repeat(n)); }');
  expect(deep.call([10n])).toBe(1n);
  expect(deep.call([-1n])).toBe(2n);
  expect(errorOf(() => deep.call([300_000n]))).toBe("stack overflow");
  expect(deep.faults).toBe(1);
  // No wait: the spare instance takes over at the next call, where the faulting UDF's globals start over.
  expect(deep.call([-1n])).toBe(1n);
  expect(deep.call([10n])).toBe(1n);
  // The other UDF never noticed: its instance and its globals are untouched.
  expect(other.call([10n])).toBe(12n);
  // Deep recursion in JS is QuickJS's own stack error: no fault, the instance stays.
  const rec = await box("rec", "function rec(n) { return n === 0 ? 0 : 1 + rec(n - 1); }");
  expect(errorOf(() => rec.call([1_000_000n]))).toBe("stack overflow");
  expect(rec.faults).toBe(0);
  // JSON 20,000 deep recurses in C and may overflow the host's stack first: a fault, recovered the same way.
  const json = await box("json", 'function json(n) { return JSON.parse("[".repeat(n) + "]".repeat(n)).length; }');
  expect(errorOf(() => json.call([20000n]))).toBe("stack overflow");
  expect(json.call([100n])).toBe(1n);
  expect(other.call([1n])).toBe(4n);
});

test("faults faster than a spare is made: the faulting UDF's calls fail until its fresh instance is there, the others' never do", async () => {
  const other = await box("other", "function other(x) { return x + 1; }");
  const deep = await box("deep", 'function deep(n) { return eval("(".repeat(n) + "1" + ")".repeat(n)); }');
  const errors = new Set<string>();
  for (let i = 0; i < 5; i++) {
    errors.add(errorOf(() => deep.call([300_000n])));
    expect(other.call([BigInt(i)])).toBe(BigInt(i + 1));
  }
  expect(deep.faults).toBeGreaterThanOrEqual(1);
  expect([...errors].every((e) => e === "stack overflow" || e === "the JavaScript sandbox is restarting after a fault")).toBe(true);
  await waitFor(() => {
    try {
      return deep.call([10n]) === 1n;
    } catch {
      return false;
    }
  }, "the faulting UDF answers again");
});

test("the fast path keeps the call's shape: arguments.length, this, and a script that rewrote Function and the prototypes", async () => {
  const b = await box(
    "shape",
    `Function.prototype.apply = Function.prototype.call = function () { return "hijacked"; };
    Array.prototype.push = Array.prototype.join = function () { return "hijacked"; };
    Function = function () { return function () { return "hijacked"; }; };
    function shape() { return arguments.length * 10 + (this === globalThis ? 1 : 0); }`,
  );
  expect(b.call([])).toBe(1n);
  expect(b.call([1n])).toBe(11n);
  expect(b.call([1n, true, null])).toBe(31n);
  expect(b.call([1n, "s"])).toBe(21n);
});

const ctx: CallCtx = { name: "x", env: { now: () => 0, zone: UTC, ruleId: "r", ruleStart: 0 }, state: undefined };

test("through the registry: breaches are row errors `call func <id> error: …`", async () => {
  await registerScript(functions, { id: "hangs", description: "", script: "function hangs(x) { while (x) {} return 7; }", isAgg: false }, LIMITS);
  const f = functions.lookup("hangs")!;
  expect(errorOf(() => invoke(f, [true], { ...ctx, name: "hangs" }))).toBe("call func hangs error: time limit of 50ms exceeded");
  expect(f.exec!([false], ctx)).toBe(7n);
  await expect(registerScript(functions, { id: "loads", description: "", script: "for (;;) {} function loads() {}", isAgg: false }, LIMITS)).rejects.toThrow("time limit of 50ms exceeded");
  expect(functions.lookup("loads")).toBeUndefined();
  unregisterScript(functions, "hangs");
});
