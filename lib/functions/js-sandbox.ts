/**
 * The JavaScript UDF sandbox: QuickJS compiled to WebAssembly (quickjs-emscripten, sync variant).
 * Each UDF gets its own QuickJS runtime (its own heap, memory limit and interrupt handler) and one
 * context whose globals are the ECMAScript built-ins only: no host object is ever handed in, so
 * there is no `process`, `Bun`, `require`, `fetch`, module loader or file system to reach.
 * Arguments cross as plain values (numbers, strings, booleans, null; arrays and objects as JSON
 * text parsed inside the sandbox), results come back as values or JSON text, so no object of
 * either realm is shared. Every entry into the sandbox (script load, a call, its pending jobs, the
 * conversion of its result) runs under a CPU time limit checked by QuickJS's interrupt handler.
 * Each UDF also has a WebAssembly instance of its own (quickjs-module.ts), loaded on first use
 * (`loadSandbox`), never at start-up: a fault that breaks an instance breaks one UDF, which moves
 * to a spare instance. The clocks are this file's own: a time limit cannot be given as a value.
 */
import type { QuickJSContext, QuickJSHandle, QuickJSRuntime, QuickJSWASMModule } from "quickjs-emscripten-core";
import { DateTime, Duration, type Value } from "../value/values.ts";
import { prelude } from "./js-sandbox-prelude.ts";
import { ArgEncoder, fail, isPlain, numberValue, reviveNumber, SandboxError } from "./js-sandbox-values.ts";
import { FAST_ARGS, HeapView, pollCounter, pollSoon, type Internals } from "./quickjs-internals.ts";
import { loadSandbox, newInstance, takeSpare } from "./quickjs-module.ts";

export { loadSandbox, SandboxError };

export interface SandboxLimits {
  /** CPU time of one entry into the sandbox (a script load, a call), in milliseconds. */
  readonly timeoutMs: number;
  /** Heap of one UDF's runtime, in bytes. */
  readonly memoryBytes: number;
}

export const DEFAULT_SANDBOX_LIMITS: SandboxLimits = { timeoutMs: 100, memoryBytes: 32 * 1024 * 1024 };

/**
 * QuickJS's own stack guard (its C stack in linear memory): ~1,500 JS frames. What recurses in C
 * (the parser of a deeply nested `eval`, JSON.parse) can overflow the host's stack first: a fault
 * of the instance (`failure`).
 */
const MAX_STACK_BYTES = 256 * 1024;
/** Wall time of an entry before the CPU clock is consulted at all (short calls never read it). */
const CPU_CLOCK_AFTER_MS = 1;
/** A call that held the thread this many times its time limit (in wall time) is ended whatever its CPU time. */
const HARD_WALL_FACTOR = 10;

const threadCpu: () => { user: number; system: number } = typeof process.threadCpuUsage === "function" ? () => process.threadCpuUsage() : () => process.cpuUsage();

/** CPU time of this thread in milliseconds. */
function threadCpuMs(): number {
  const u = threadCpu();
  return (u.user + u.system) / 1000;
}

/** Pending jobs run in slices of this many between two deadline checks. */
const JOB_SLICE = 256;

/** The message of a fault: what broke the instance. */
function faultText(e: unknown): string {
  return e instanceof RangeError ? "stack overflow" : `sandbox fault: ${e instanceof Error ? e.message : String(e)}`;
}

function mib(bytes: number): string {
  return bytes % (1024 * 1024) === 0 ? `${bytes / (1024 * 1024)} MiB` : `${bytes} bytes`;
}

/** A sandbox for the function `name` of `script` in an instance of its own (`SandboxError` when the script fails to load). */
export async function createSandbox(name: string, script: string, limits: SandboxLimits = DEFAULT_SANDBOX_LIMITS): Promise<Sandbox> {
  return new Sandbox(name, script, limits, await newInstance());
}

/**
 * One UDF in its own QuickJS runtime in its own WebAssembly instance. `call` is synchronous; a
 * breach of a limit recreates the runtime; a fault of the instance moves the UDF to a fresh one.
 */
export class Sandbox {
  private rt!: QuickJSRuntime;
  private ctx!: QuickJSContext;
  private fn!: QuickJSHandle;
  private argIn!: QuickJSHandle;
  private resOut!: QuickJSHandle;
  private errText!: QuickJSHandle;
  private lengthKey!: QuickJSHandle;
  /** The fast path's wrapper per argument count (made at first use) and its wrapper factory. */
  private readonly wrappers: (QuickJSHandle | undefined)[] = [];
  private wrap!: QuickJSHandle;
  private take!: QuickJSHandle;
  private inner!: Internals;
  /** The instance's heap as int32s (a new view only after its memory grew). */
  private heap!: HeapView;
  /** wasm heap: FAST_ARGS argument pointers for the fast path. */
  private argv = 0;
  private readonly ptrs: number[] = [];
  /** Wall-clock start of the current entry and the point where its CPU time is checked. */
  private start = 0;
  private deadline = Infinity;
  /** Thread CPU time (ms) at the first poll of the current entry. */
  private cpu0 = -1;
  private nextCpuCheck = 0;
  private interrupted = false;
  /** Set after a breach: the runtime is rebuilt before the next call. */
  private stale = false;
  /** The instance the runtime is built in; undefined after a fault until a fresh one is there. */
  private mod: QuickJSWASMModule | undefined;
  /** Whether the runtime's handles live in a working instance (false after a fault: nothing to free). */
  private live = false;
  private disposed = false;
  /** Faults of this sandbox's instance so far (each moved it to a fresh instance). */
  faults = 0;
  private readonly args: QuickJSHandle[] = [];
  private readonly enc = new ArgEncoder();

  /** Loads `script` into `mod` and finds the function `name` in it; throws a SandboxError when either fails. */
  constructor(
    readonly name: string,
    readonly script: string,
    readonly limits: SandboxLimits,
    mod: QuickJSWASMModule,
  ) {
    this.mod = mod;
    this.build(mod);
  }

  private build(mod: QuickJSWASMModule): void {
    this.live = true;
    const rt = mod.newRuntime();
    rt.setMemoryLimit(this.limits.memoryBytes);
    rt.setMaxStackSize(MAX_STACK_BYTES);
    this.rt = rt;
    const ctx = rt.newContext();
    this.ctx = ctx;
    const counter = pollCounter(mod);
    const inner = ctx as unknown as Internals;
    const heap = new HeapView(inner);
    this.heap = heap;
    const at = counter === undefined ? -1 : inner.ctx.value + counter;
    // A new context starts at the default count: the first poll comes soon too.
    if (at >= 0) pollSoon(heap, at);
    rt.setInterruptHandler(() => {
      if (at >= 0) pollSoon(heap, at);
      if (!this.overBudget()) return false;
      this.interrupted = true;
      return true;
    });
    const owned: QuickJSHandle[] = [];
    try {
      // The prelude is floe's own code: the time limit starts with the user's script.
      const helpers = this.check(ctx.evalCode(prelude(Math.floor(this.limits.memoryBytes / 8)), "prelude.js"));
      owned.push(helpers);
      this.argIn = ctx.getProp(helpers, 0);
      this.resOut = ctx.getProp(helpers, 1);
      this.errText = ctx.getProp(helpers, 2);
      this.lengthKey = ctx.newString("length");
      this.wrap = ctx.getProp(helpers, 3);
      this.take = ctx.getProp(helpers, 4);
      this.enter();
      this.check(ctx.evalCode(this.script, `${this.name}.js`)).dispose();
      this.runJobs();
      const fn = this.check(ctx.evalCode(`typeof ${this.name} === "function" ? ${this.name} : undefined`, "lookup.js"));
      if (ctx.typeof(fn) !== "function") {
        fn.dispose();
        fail(`function ${this.name} is not defined in the script`);
      }
      this.fn = fn;
      this.wrappers.length = 0;
      this.inner = inner;
      this.argv = inner.module._malloc(4 * FAST_ARGS);
    } catch (e) {
      const err = this.failure(e);
      if (this.live) {
        for (const h of owned) if (h.alive) h.dispose();
        this.free();
      }
      throw err;
    } finally {
      this.deadline = Infinity;
      if (this.live) for (const h of owned) if (h.alive) h.dispose();
    }
  }

  /**
   * A SandboxError as is (a breach marks the runtime for a rebuild). Anything else is a fault
   * inside the WebAssembly — the host's stack overflowing under QuickJS's own check (deeply nested
   * source in `eval`), a trap — which unwinds past QuickJS and leaves this instance's C stack and
   * state behind: the instance is dropped, and the runtime is rebuilt in the spare one at the next
   * call (until a spare is there, calls of this UDF are errors).
   */
  private failure(e: unknown): SandboxError {
    if (e instanceof SandboxError) return e;
    this.faults++;
    this.live = false;
    this.mod = takeSpare();
    if (!this.mod) {
      newInstance().then(
        (m) => (this.disposed || this.mod ? undefined : (this.mod = m)),
        () => undefined,
      );
    }
    return new SandboxError(faultText(e), true);
  }

  private enter(): void {
    this.interrupted = false;
    this.start = performance.now();
    this.deadline = this.start + this.limits.timeoutMs;
    this.cpu0 = -1;
    this.nextCpuCheck = 0;
  }

  /** Unwraps a result; a thrown value becomes a SandboxError with its message. */
  private check(r: { error?: QuickJSHandle; value?: QuickJSHandle }): QuickJSHandle {
    if (r.error === undefined) return r.value!;
    const err = r.error;
    try {
      if (this.interrupted) fail(`time limit of ${this.limits.timeoutMs}ms exceeded`, true);
      let msg = "error";
      if (this.errText?.alive) {
        const t = this.ctx.callFunction(this.errText, this.ctx.undefined, err);
        if (t.error) t.error.dispose();
        else {
          msg = this.ctx.typeof(t.value) === "string" ? this.ctx.getString(t.value) : msg;
          t.value.dispose();
        }
      }
      if (msg === "out of memory") fail(`memory limit of ${mib(this.limits.memoryBytes)} exceeded`, true);
      if (msg === "interrupted" || this.interrupted) fail(`time limit of ${this.limits.timeoutMs}ms exceeded`, true);
      fail(msg);
    } finally {
      err.dispose();
    }
  }

  /**
   * The time limit is CPU time of the engine's thread, checked cheaply: polls in the first
   * millisecond of an entry only read the wall clock; the CPU clock (a system call) is read at the
   * first poll after it and, once the wall clock has passed the limit, at most once per
   * millisecond; so a call that only waited for the CPU on a busy machine is not cut. A wall time
   * of HARD_WALL_FACTOR × the limit ends any call.
   */
  private overBudget(): boolean {
    const now = performance.now();
    const elapsed = now - this.start;
    if (elapsed < CPU_CLOCK_AFTER_MS) return false;
    // The first millisecond counts as CPU time; the CPU clock is read from here on.
    if (this.cpu0 < 0) this.cpu0 = threadCpuMs() - CPU_CLOCK_AFTER_MS;
    if (now <= this.deadline || now < this.nextCpuCheck) return false;
    if (elapsed > this.limits.timeoutMs * HARD_WALL_FACTOR) return true;
    this.nextCpuCheck = now + 1;
    return threadCpuMs() - this.cpu0 > this.limits.timeoutMs;
  }

  /** Runs queued promise jobs until none is left, within the current deadline. */
  private runJobs(): void {
    while (this.rt.hasPendingJob()) {
      if (this.overBudget()) fail(`time limit of ${this.limits.timeoutMs}ms exceeded`, true);
      const r = this.rt.executePendingJobs(JOB_SLICE);
      // A job that threw is the script's business, unless a limit stopped it (the error of an
      // interrupted job is not always reported, hence the flag).
      if (r.error) r.error.dispose();
      if (this.interrupted) fail(`time limit of ${this.limits.timeoutMs}ms exceeded`, true);
    }
  }

  private toHandle(v: Value | undefined): QuickJSHandle {
    const ctx = this.ctx;
    if (v === null || v === undefined) return ctx.null;
    switch (typeof v) {
      case "number":
        return ctx.newNumber(v);
      case "bigint":
        return ctx.newNumber(Number(v));
      case "string":
        // newString takes a C string: one with NUL inside crosses as JSON instead.
        if (v.indexOf("\u0000") < 0) return ctx.newString(v);
        break;
      case "boolean":
        return v ? ctx.true : ctx.false;
    }
    if (v instanceof DateTime) return ctx.newNumber(v.ms);
    if (v instanceof Duration) return ctx.newNumber(Number(v.ns));
    return this.viaJson(v);
  }

  private viaJson(v: Value): QuickJSHandle {
    const ctx = this.ctx;
    const enc = this.enc;
    enc.special = false;
    const text = ctx.newString(enc.encode(v));
    const r = ctx.callFunction(this.argIn, ctx.undefined, text, enc.special ? ctx.true : ctx.false);
    text.dispose();
    return this.check(r);
  }

  private fromHandle(h: QuickJSHandle): Value {
    const ctx = this.ctx;
    switch (ctx.typeof(h)) {
      case "number":
        return numberValue(ctx.getNumber(h));
      case "string": {
        // getString reads a C string: a NUL inside would cut it, so such a string comes back as JSON.
        const s = ctx.getString(h);
        const n = ctx.getProp(h, this.lengthKey);
        const len = ctx.getNumber(n);
        n.dispose();
        return len === s.length ? s : this.viaText(h);
      }
      case "boolean":
        return ctx.dump(h) === true;
      case "undefined":
        return null;
      case "bigint":
        return BigInt.asIntN(64, ctx.getBigInt(h));
      case "object":
        return this.viaText(h);
      default:
        return fail(`unsupported result type ${ctx.typeof(h)}`);
    }
  }

  /** A result as JSON text made inside the sandbox (NaN/±Inf and functions refused there). */
  private viaText(h: QuickJSHandle): Value {
    const s = this.check(this.ctx.callFunction(this.resOut, this.ctx.undefined, h));
    try {
      // JSON.stringify answers undefined for a value whose toJSON does.
      if (this.ctx.typeof(s) !== "string") return null;
      return JSON.parse(this.ctx.getString(s), reviveNumber) as Value;
    } finally {
      s.dispose();
    }
  }

  /** Calls the function with `args`; throws a SandboxError on a thrown error or a breach. */
  call(args: readonly (Value | undefined)[]): Value {
    if (this.stale || !this.live) this.rebuild();
    if (args.length <= FAST_ARGS && isPlain(args)) return this.fastCall(args);
    const handles = this.args;
    handles.length = 0;
    this.enter();
    let result: QuickJSHandle | undefined;
    try {
      for (let i = 0; i < args.length; i++) handles.push(this.toHandle(args[i]));
      result = this.check(this.ctx.callFunction(this.fn, this.ctx.undefined, handles));
      const v = this.fromHandle(result);
      this.runJobs();
      return v;
    } catch (e) {
      const err = this.failure(e);
      if (err.breach) this.stale = true;
      throw err;
    } finally {
      this.deadline = Infinity;
      if (this.live) {
        result?.dispose();
        for (let i = 0; i < handles.length; i++) handles[i]!.dispose();
      }
      handles.length = 0;
    }
  }

  /**
   * The same call through quickjs-emscripten's FFI directly, for plain arguments: no handle
   * objects, no argument array allocated per call, and no `typeof` round trip for a number result.
   */
  private fastCall(args: readonly (Value | undefined)[]): Value {
    const { ffi, memory } = this.inner;
    const c = this.inner.ctx.value;
    const ptrs = this.ptrs;
    const n = args.length;
    try {
      const wrapped = this.wrappers[n] ?? this.makeWrapper(n);
      this.enter();
      for (let i = 0; i < n; i++) {
        const v = args[i];
        ptrs[i] = typeof v === "number" ? ffi.QTS_NewFloat64(c, v) : typeof v === "bigint" ? ffi.QTS_NewFloat64(c, Number(v)) : 0;
      }
      // Written after every allocation: one may have grown (and so replaced) the heap.
      const heap = this.heap.get();
      const base = this.argv >> 2;
      for (let i = 0; i < n; i++) {
        const v = args[i];
        heap[base + i] = ptrs[i] || (v === true ? this.ctx.true.value : v === false ? this.ctx.false.value : this.ctx.null.value);
      }
      const res = ffi.QTS_Call(c, wrapped.value, this.ctx.undefined.value, n, this.argv);
      const err = ffi.QTS_ResolveException(c, res);
      if (err) {
        ffi.QTS_FreeValuePointer(c, res);
        this.check({ error: memory.heapValueHandle(err) });
      }
      const x = ffi.QTS_GetFloat64(c, res);
      ffi.QTS_FreeValuePointer(c, res);
      let v: Value;
      if (x === x) v = numberValue(x);
      else {
        const h = this.check(this.ctx.callFunction(this.take, this.ctx.undefined));
        try {
          v = this.fromHandle(h);
        } finally {
          h.dispose();
        }
      }
      this.runJobs();
      return v;
    } catch (e) {
      const err = this.failure(e);
      if (err.breach) this.stale = true;
      throw err;
    } finally {
      this.deadline = Infinity;
      const live = this.live;
      for (let i = 0; i < n; i++) {
        if (ptrs[i] && live) ffi.QTS_FreeValuePointer(c, ptrs[i]!);
        ptrs[i] = 0;
      }
    }
  }

  private makeWrapper(n: number): QuickJSHandle {
    const count = this.ctx.newNumber(n);
    try {
      const w = this.check(this.ctx.callFunction(this.wrap, this.ctx.undefined, this.fn, count));
      this.wrappers[n] = w;
      return w;
    } finally {
      count.dispose();
    }
  }

  /** After a breach or a fault: a fresh runtime with the script loaded again (its globals start over). */
  private rebuild(): void {
    this.free();
    if (!this.mod) fail("the JavaScript sandbox is restarting after a fault", true);
    this.stale = false;
    try {
      this.build(this.mod);
    } catch (e) {
      this.stale = true;
      throw e;
    }
  }

  /** Frees the runtime and lets the instance go. */
  dispose(): void {
    this.free();
    this.disposed = true;
    this.mod = undefined;
  }

  /** Frees the runtime (every handle first: QuickJS asserts that nothing is left). */
  private free(): void {
    // A runtime of a faulted instance has nothing left to free there.
    if (!this.live) return;
    this.live = false;
    for (const h of [this.fn, this.argIn, this.resOut, this.errText, this.lengthKey, this.wrap, this.take, ...this.wrappers]) if (h?.alive) h.dispose();
    this.wrappers.length = 0;
    if (this.argv) this.inner.module._free(this.argv);
    this.argv = 0;
    if (this.ctx?.alive) this.ctx.dispose();
    if (this.rt?.alive) this.rt.dispose();
  }
}
