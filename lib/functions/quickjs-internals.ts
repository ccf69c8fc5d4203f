/**
 * What floe reaches inside quickjs-emscripten below its public API (the version is pinned in
 * package.json): the FFI and heap for the sandbox's fast call path, and the interrupt counter of a
 * QuickJS context.
 */
import type { QuickJSHandle, QuickJSWASMModule } from "quickjs-emscripten-core";

/**
 * QuickJS polls the interrupt handler once per 10,000 "ticks" (back jumps and calls). A tick can be
 * a long call into a C built-in (`"y".repeat(1 << 20)`: ~15 ms here), so 10,000 of them
 * would outlast any time limit. The handler therefore sets the context's `interrupt_counter` to
 * POLL_TICKS each time it runs. That field is private to the C struct: its offset is found once by
 * calibration (the only word of the context that reads 10,000 at every poll, confirmed by the
 * handler then being polled far more often); when calibration fails the default polling stays.
 */
const POLL_TICKS = 10;
const DEFAULT_TICKS = 10_000;
const CONTEXT_SCAN_BYTES = 2048;
let counterOffset: number | null | undefined;

/** The parts of quickjs-emscripten's context used to reach the counter (version pinned in package.json). */
export interface Internals {
  readonly ctx: { readonly value: number };
  readonly module: { readonly HEAPU8: Uint8Array; _malloc(bytes: number): number; _free(ptr: number): void };
  readonly ffi: {
    QTS_NewFloat64(ctx: number, n: number): number;
    QTS_GetFloat64(ctx: number, v: number): number;
    QTS_Call(ctx: number, fn: number, self: number, argc: number, argv: number): number;
    QTS_ResolveException(ctx: number, v: number): number;
    QTS_FreeValuePointer(ctx: number, v: number): void;
  };
  readonly memory: { heapValueHandle(ptr: number): QuickJSHandle };
}

/** Calls whose arguments are all numbers, booleans or nulls, up to this many, take the FFI fast path. */
export const FAST_ARGS = 8;

/** One instance's heap as int32s (each sandbox has its own instance; a new view only after its memory grew). */
export class HeapView {
  private view: Int32Array;
  constructor(private readonly inner: Internals) {
    this.view = new Int32Array(inner.module.HEAPU8.buffer);
  }

  get(): Int32Array {
    const buf = this.inner.module.HEAPU8.buffer;
    if (this.view.buffer !== buf) this.view = new Int32Array(buf);
    return this.view;
  }
}

export function pollSoon(heap: HeapView, at: number): void {
  heap.get()[at >> 2] = POLL_TICKS;
}

/** The offset of `interrupt_counter` in a JSContext, or undefined when it could not be established. */
export function pollCounter(mod: QuickJSWASMModule): number | undefined {
  if (counterOffset === undefined) counterOffset = calibrate(mod);
  return counterOffset ?? undefined;
}

function calibrate(mod: QuickJSWASMModule): number | null {
  const rt = mod.newRuntime();
  const ctx = rt.newContext();
  const inner = ctx as unknown as Internals;
  const base = inner.ctx.value;
  const heap = new HeapView(inner);
  let candidates: Set<number> | undefined;
  let polls = 0;
  let boost = -1;
  rt.setInterruptHandler(() => {
    polls++;
    const h = heap.get();
    if (boost >= 0) {
      h[(base + boost) >> 2] = POLL_TICKS;
      return false;
    }
    const seen = new Set<number>();
    for (let off = 0; off < CONTEXT_SCAN_BYTES; off += 4) if (h[(base + off) >> 2] === DEFAULT_TICKS && (!candidates || candidates.has(off))) seen.add(off);
    candidates = seen;
    return false;
  });
  const loop = "for (var i = 0; i < 50000; i++) {}";
  try {
    ctx.evalCode(loop).dispose();
    const before = polls;
    if (!candidates || candidates.size !== 1 || before < 2) return null;
    boost = [...candidates][0]!;
    polls = 0;
    ctx.evalCode(loop).dispose();
    return polls >= before * 10 ? boost : null;
  } finally {
    ctx.dispose();
    rt.dispose();
  }
}
