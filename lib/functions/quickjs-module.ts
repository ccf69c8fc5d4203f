/**
 * The QuickJS WebAssembly instances of the UDF sandbox (js-sandbox.ts). The .wasm is read and
 * compiled once; each UDF's sandbox gets an instance of its own — its own linear memory, C stack
 * and QuickJS state — so that a fault in one UDF (the host's stack overflowing inside the
 * WebAssembly, a trap) breaks that instance only and no other UDF notices. One spare instance is
 * kept ready: a sandbox whose instance faulted takes it synchronously and answers its next call,
 * and the spare is refilled in the background (instantiating takes a few milliseconds and cannot be
 * done synchronously: the Emscripten loader is asynchronous).
 */
import type { QuickJSWASMModule } from "quickjs-emscripten-core";

let factory: Promise<() => Promise<QuickJSWASMModule>> | undefined;
let spare: QuickJSWASMModule | undefined;
let refilling: Promise<void> | undefined;

/**
 * Reads and compiles the .wasm once (a few hundred ms) and readies the spare; later calls resolve
 * at once. The wasmfile variant: `bun build --compile` embeds its .wasm as a file (+0.7 MiB to
 * dist/floe, where the singlefile variant's base64 copy inside JS costs +2.0 MiB).
 */
export function loadSandbox(): Promise<void> {
  factory ??= (async () => {
    const [core, variant, file] = await Promise.all([import("quickjs-emscripten-core"), import("@jitl/quickjs-wasmfile-release-sync"), import("./quickjs-wasm.ts")]);
    const wasmModule = await WebAssembly.compile(await Bun.file(file.default).arrayBuffer());
    // Each call instantiates the compiled module afresh: a new memory, a new QuickJS.
    return () => core.newQuickJSWASMModuleFromVariant(core.newVariant(variant.default, { wasmModule }));
  })();
  factory.catch(() => (factory = undefined));
  return factory.then(refill);
}

/** Makes a spare instance unless one is ready or on its way. */
function refill(): Promise<void> {
  if (spare) return Promise.resolve();
  refilling ??= (async () => {
    try {
      spare = await (await factory!)();
    } finally {
      refilling = undefined;
    }
  })();
  return refilling;
}

/** A fresh instance for a new sandbox (the spare stays for the next fault). */
export async function newInstance(): Promise<QuickJSWASMModule> {
  await loadSandbox();
  return (await factory!)();
}

/** The spare instance, now, or undefined while none is ready; a new spare is made in the background. */
export function takeSpare(): QuickJSWASMModule | undefined {
  const m = spare;
  spare = undefined;
  if (factory) refill().catch(() => undefined);
  return m;
}
