/**
 * The long hostile-input run's generator (bench/hostile.ts): from one seeded PRNG, request bodies
 * for a route — a valid definition of the kind the route takes, then JSON mutations (wrong types,
 * huge strings, deep nesting, unicode, extreme numbers, odd keys) and byte mutations (invalid
 * UTF-8, truncation, random bytes) — and mutated connector payloads of a format case.
 */
import { garbage, type FormatCase } from "../test/hostile/payload-cases.ts";

export type Rand = () => number;

/** Objects the run creates are named from a few names, so the daemon's state stays bounded. */
const name = (r: Rand) => `fz${Math.floor(r() * 4)}`;
const pick = <T>(r: Rand, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;

const CREATE = (kind: string, n: string) => `CREATE ${kind} ${n} (a BIGINT, s STRING) WITH (TYPE="memory", DATASOURCE="${n}", FORMAT="json"${kind === "TABLE" ? ', KIND="lookup", KEY="a"' : ""})`;

/** A valid body for `METHOD path` (the route template), or a plausible one for any route. */
function validBody(r: Rand, method: string, path: string): unknown {
  const n = name(r);
  const rule = { id: n, sql: `SELECT a, s FROM ${n} WHERE a > 1`, actions: [{ nop: {} }], options: { qos: 0, bufferLength: 64 }, tags: ["fz"] };
  if (/^\/streams/.test(path)) return { sql: CREATE("STREAM", path.includes("{") ? "victim" : n) };
  if (/^\/tables/.test(path)) return { sql: CREATE("TABLE", path.includes("{") ? "victim_table" : n) };
  if (path === "/rules" || path === "/rules/validate" || path === "/rules/{name}") return path === "/rules/{name}" ? { ...rule, id: "victim" } : rule;
  if (path === "/ruletest") return { id: n, sql: `SELECT * FROM ${n}`, mockSource: { [n]: { data: [{ a: 1 }], interval: 100, loop: false } }, sinkProps: {} };
  if (path.includes("/tags")) return { tags: ["fz", n] };
  if (path.startsWith("/rules/bulk")) return [{ id: "victim" }];
  if (path.startsWith("/ruleset/import") || path.endsWith("/data/import")) return { content: JSON.stringify({ streams: { [n]: CREATE("STREAM", n) }, rules: { [n]: JSON.stringify({ ...rule, triggered: false }) } }) };
  if (path.endsWith("/export")) return { rules: ["victim"] };
  if (path === "/configs") return { debug: false, timezone: "UTC" };
  if (path === "/config/uploads") return { name: `${n}.txt`, content: "x" };
  if (path.startsWith("/connections")) return { id: path.includes("{") ? "victim" : n, typ: "websocket", props: { path: `/${n}` } };
  if (path.includes("/confKeys/") || path.startsWith("/metadata/")) return { server: "tcp://127.0.0.1:1", username: n, password: "p" };
  if (path.startsWith("/schemas")) return { name: path.includes("{name}") ? "victim" : n, content: 'syntax = "proto3"; message M { int64 a = 1; string s = 2; }' };
  if (path.startsWith("/udf/javascript")) return { id: path.includes("{id}") ? "victim" : n, script: `function ${path.includes("{id}") ? "victim" : n}(v) { return v; }` };
  if (path.includes("/trace/start")) return { strategy: "always" };
  if (path === "/tracer") return { action: "stop" };
  if (path === "/batch/req") return [{ method: "GET", path: "/ping" }, { method: "GET", path: "/rules" }];
  if (path.startsWith("/plugins") || path.startsWith("/services")) return { name: n, file: "file:///nonexistent.zip" };
  return { id: n, name: n, sql: `SELECT * FROM ${n}`, content: "x" };
}

const UNICODE = ["\u0000", "\ud800", "\udfff", "\u202e", "\ufeff", "😀", "\u0301\u0301\u0301", "\\", '"', "'; DROP", "${x}", "{{.a}}", "\n\r\t"];
const KEYS = ["__proto__", "constructor", "prototype", "", "a".repeat(300), "id", "sql", "actions", "options", "graph"];

function randomString(r: Rand, max: number): string {
  const len = Math.floor(r() ** 3 * max);
  if (r() < 0.5) return pick(r, ["x", "é", "😀", "%", "\u0000"]).repeat(len);
  let s = "";
  for (let i = 0; i < Math.min(len, 512); i++) s += r() < 0.2 ? pick(r, UNICODE) : String.fromCharCode(32 + Math.floor(r() * 95));
  return s;
}

function nested(r: Rand, depth: number): unknown {
  let v: unknown = r() < 0.5 ? 1 : "x";
  const arr = r() < 0.5;
  for (let i = 0; i < depth; i++) v = arr ? [v] : { a: v };
  return v;
}

/** A value of a random kind, sometimes hostile. */
function randomValue(r: Rand): unknown {
  switch (Math.floor(r() * 10)) {
    case 0:
      return null;
    case 1:
      return r() < 0.5;
    case 2:
      return pick(r, [0, -0, 1.5, -1, 2 ** 53 + 1, 2 ** 63, 1e308, -1e308, 5e-324, 123456789012345678901234567890]);
    case 3:
      return randomString(r, 256 * 1024);
    case 4:
      return nested(r, Math.floor(r() * 2000));
    case 5:
      return [];
    case 6:
      return {};
    case 7:
      return pick(r, UNICODE);
    case 8:
      return Array.from({ length: Math.floor(r() * 2000) }, () => r());
    default:
      return randomString(r, 64);
  }
}

/** Replaces, removes or adds one member somewhere in `v` (mutated in place when a container). */
function mutate(r: Rand, v: unknown, depth = 0): unknown {
  const isArr = Array.isArray(v);
  if ((v === null || typeof v !== "object") || depth > 6 || r() < 0.25) return randomValue(r);
  const o = v as Record<string, unknown>;
  const keys = Object.keys(o);
  const op = r();
  if (op < 0.15 || keys.length === 0) {
    if (isArr) (o as unknown as unknown[]).push(randomValue(r));
    else o[pick(r, KEYS)] = randomValue(r);
  } else if (op < 0.25) {
    delete o[pick(r, keys)];
  } else {
    const k = pick(r, keys);
    o[k] = mutate(r, o[k], depth + 1);
  }
  return v;
}

const enc = new TextEncoder();

function splice(a: Uint8Array, at: number, insert: Uint8Array): Uint8Array {
  return new Uint8Array([...a.subarray(0, at), ...insert, ...a.subarray(at)]);
}

export interface GeneratedBody {
  readonly body: Uint8Array | undefined;
  readonly contentType: string | undefined;
}

/** A hostile body for `method path`: a mutated valid one, or bytes that are not JSON at all. */
export function requestBody(r: Rand, method: string, path: string): GeneratedBody {
  if ((method === "GET" || method === "HEAD" || method === "DELETE") && r() < 0.7) return { body: undefined, contentType: undefined };
  let v = structuredClone(validBody(r, method, path));
  for (let i = 0, n = 1 + Math.floor(r() * 3); i < n; i++) v = mutate(r, v);
  let b: Uint8Array = enc.encode(JSON.stringify(v) ?? "null");
  const op = r();
  if (op < 0.1) b = splice(b, Math.floor(r() * b.length), new Uint8Array([0xff, 0xfe, 0xc3, 0x28, 0xed, 0xa0, 0x80]));
  else if (op < 0.15) b = b.subarray(0, Math.floor(r() * b.length));
  else if (op < 0.2) b = garbage(Math.floor(r() * 4096), Math.floor(r() * 2 ** 31));
  const contentType = r() < 0.85 ? "application/json" : pick(r, ["text/plain", "multipart/form-data; boundary=B", "application/x-www-form-urlencoded", ""]);
  return { body: b, contentType: contentType || undefined };
}

/** A mutation of the case's good payload, or one of its hostile payloads. */
export function payload(r: Rand, c: FormatCase): Uint8Array {
  const good = c.good.payload;
  switch (Math.floor(r() * 7)) {
    case 0:
      return pick(r, c.hostile).payload;
    case 1: {
      const b = new Uint8Array(good);
      for (let i = 0, n = 1 + Math.floor(r() * 4); i < n && b.length; i++) b[Math.floor(r() * b.length)] = Math.floor(r() * 256);
      return b;
    }
    case 2:
      return good.subarray(0, Math.floor(r() * good.length));
    case 3:
      return splice(good, Math.floor(r() * good.length), garbage(1 + Math.floor(r() * 64), Math.floor(r() * 2 ** 31)));
    case 4:
      return enc.encode(JSON.stringify(mutate(r, { a: 1, s: "x" })));
    case 5: {
      const times = 1 + Math.floor(r() * 5000);
      const out = new Uint8Array(good.length * times);
      for (let i = 0; i < times; i++) out.set(good, i * good.length);
      return out;
    }
    default:
      return garbage(Math.floor(r() * 8192), Math.floor(r() * 2 ** 31));
  }
}
