/**
 * Runs one conformance vector (../shared/conformance, README "Running a case through pipe mode")
 * through the same pipe-mode path as `floe run --replay --emit array`, and compares.
 */
import "../../lib/functions/index.ts";
import { loadLocation, UTC } from "../../lib/expr/time.ts";
import { runPipe } from "../../lib/runtime/pipe.ts";
import { parseStatement, splitStatements } from "../../lib/sql/parse.ts";

export interface Vector {
  name: string;
  source: string;
  sql: string;
  options?: Record<string, unknown>;
  timezone?: string;
  input?: unknown[];
  onEof?: "flush" | "drop";
  want?: unknown[][];
  err?: string;
  parses?: boolean;
  stream?: unknown;
  match?: "unordered-rows" | "unordered-arrays";
  note?: string;
}

async function* linesOf(input: unknown[]): AsyncIterable<string[]> {
  yield input.map((x) => JSON.stringify(x));
}

/** Runs a vector; returns undefined on success or a description of the mismatch. */
export async function runVector(v: Vector): Promise<string | undefined> {
  if (v.parses) return checkParse(v);
  let out = "";
  let err = "";
  const input = v.input ?? [];
  const res = await runPipe({
    sql: v.sql,
    options: v.options ?? {},
    input: linesOf(input),
    replay: true,
    emit: "array",
    onEof: v.onEof ?? "flush",
    zone: v.timezone ? loadLocation(v.timezone) : UTC,
    write: (t) => void (out += t),
    warn: (t) => void (err += t),
  });
  if (v.err !== undefined) {
    if (res.exitCode !== 1) return `expected failure "${v.err}", got exit ${res.exitCode} and output ${out.trim()}`;
    if (!err.includes(v.err.trimEnd())) return `stderr ${JSON.stringify(err.trim())} lacks ${JSON.stringify(v.err.trimEnd())}`;
    return undefined;
  }
  if (res.exitCode !== 0) return `exit ${res.exitCode}: ${err.trim()}`;
  const got = out.split("\n").filter((l) => l).map((l) => JSON.parse(l) as unknown[]);
  const want = v.want ?? [];
  if (got.length !== want.length) return `want ${JSON.stringify(want)}\n got  ${JSON.stringify(got)}${err ? "\n stderr " + err.trim() : ""}`;
  for (let i = 0; i < want.length; i++) {
    if (!emissionEqual(got[i]!, want[i]!, v.match)) return `emission ${i}: want ${JSON.stringify(want[i])}\n got  ${JSON.stringify(got[i])}`;
  }
  return undefined;
}

function checkParse(v: Vector): string | undefined {
  try {
    const parts = /several statements/.test(v.note ?? "") ? splitStatements(v.sql) : [{ text: v.sql }];
    for (const p of parts) {
      const s = parseStatement(p.text);
      if (v.stream !== undefined && s.kind === "create") {
        const got = neutralStream(s);
        if (!deepEqual(got, v.stream, undefined)) return `stream want ${JSON.stringify(v.stream)}\n got  ${JSON.stringify(got)}`;
      }
    }
    return undefined;
  } catch (e) {
    return `parse failed: ${(e as Error).message}`;
  }
}

function neutralType(t: unknown): unknown {
  if (typeof t === "string") return t;
  const o = t as { array?: unknown; struct?: unknown[] };
  if (o.array !== undefined) return { array: neutralType(o.array) };
  return { struct: (o.struct as never[]).map(neutralField) };
}
function neutralField(f: { name: string; type: unknown; default?: unknown }): unknown {
  const out: Record<string, unknown> = { name: f.name, type: neutralType(f.type) };
  if (f.default !== undefined) out.default = typeof f.default === "bigint" ? Number(f.default) : f.default;
  return out;
}
function neutralStream(s: { name: string; streamKind: string; fields: unknown[] | null; options: object }): unknown {
  return { name: s.name, kind: s.streamKind, fields: s.fields ? s.fields.map((f) => neutralField(f as never)) : null, options: s.options };
}

function numEq(a: number, b: number): boolean {
  if (a === b) return true;
  return Math.abs(a - b) <= 1e-9 * Math.max(Math.abs(a), Math.abs(b));
}

function deepEqual(a: unknown, b: unknown, match: Vector["match"]): boolean {
  if (typeof a === "number" && typeof b === "number") return numEq(a, b);
  if (a === null || b === null || typeof a !== "object" || typeof b !== "object") return a === b;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    if (match === "unordered-arrays") return multisetEqual(a, b, match);
    return a.every((x, i) => deepEqual(x, b[i], match));
  }
  if (Array.isArray(b)) return false;
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  if (ka.length !== kb.length) return false;
  return ka.every((k) => k in b && deepEqual((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k], match));
}

function multisetEqual(a: unknown[], b: unknown[], match: Vector["match"]): boolean {
  const used = new Array(b.length).fill(false);
  return a.every((x) => {
    const j = b.findIndex((y, k) => !used[k] && deepEqual(x, y, match));
    if (j < 0) return false;
    used[j] = true;
    return true;
  });
}

function emissionEqual(got: unknown[], want: unknown[], match: Vector["match"]): boolean {
  if (match === "unordered-rows") return got.length === want.length && multisetEqual(got, want, undefined);
  return deepEqual(got, want, match);
}
