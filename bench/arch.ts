/**
 * This machine's build and where its results go: the bench scripts measure `make build`'s executable
 * for the architecture they run on, and keep the results of another architecture than x64 (a
 * Raspberry Pi) in files of their own.
 */
import { join } from "node:path";

const ROOT = join(import.meta.dir, "..");

/** `make build`'s executable for this machine: dist/floe (linux-x64) or dist/floe-linux-arm64. */
export const DEFAULT_FLOE_BIN = join(ROOT, process.arch === "arm64" ? "dist/floe-linux-arm64" : "dist/floe");

/** The suffix of a results file made off x64: `<date>-w1-arm64.json`; none on x64. */
export const ARCH_SUFFIX = process.arch === "x64" ? "" : `-${process.arch}`;
