// @ts-expect-error a file import: bun embeds the .wasm in the executable and gives its path.
import path from "@jitl/quickjs-wasmfile-release-sync/wasm" with { type: "file" };
export default path as string;
