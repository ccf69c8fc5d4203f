/**
 * One outbound client: `lib/net/` is the only place in lib/ (and generated/, cli.ts) that opens a
 * connection — HTTP requests, websockets, raw sockets, and the broker and database clients. The
 * scan reads every source file with its comments removed and fails on any way of opening one
 * elsewhere, beyond the exceptions listed with their reason. The scanner itself is tested on
 * snippets: each way of opening a connection is caught, look-alikes are not.
 */
import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

const ROOT = join(import.meta.dir, "..");

/** The outbound module: the guarded clients (HTTP, websocket) and the broker clients. */
const OUTBOUND = "lib/net/";

/** Code that opens connections but not on the daemon's behalf to a user-supplied address. */
const EXCEPTIONS: readonly { readonly prefix: string; readonly why: string }[] = [
  { prefix: "lib/server/console/ui/", why: "the console's browser code: the user's browser calls the daemon's own origin" },
  { prefix: "generated/console/", why: "the console's built bundle (the browser code above)" },
  { prefix: "lib/cli/kuiper/", why: "the CLI's client of a daemon (the kuiper verbs, `floe check --server`): it calls the daemon it manages, at the address the operator gave it" },
];

/** Every way of opening a connection the scan knows, by name. */
const OPENERS: readonly { readonly name: string; readonly re: RegExp }[] = [
  // A call of the global fetch (not a method `x.fetch(`, not a `fetch(req) {` handler of Bun.serve).
  { name: "fetch", re: /(?<![\w$.])fetch\s*\((?![^()]*\)\s*(?::[^={;]*)?\{)|\b(?:globalThis|window|self|Bun)\s*\.\s*fetch\s*\(/g },
  { name: "WebSocket", re: /\bnew\s+WebSocket\s*\(/g },
  { name: "EventSource/XMLHttpRequest", re: /\bnew\s+(?:EventSource|XMLHttpRequest)\s*\(/g },
  { name: "Bun.connect", re: /\bBun\s*\.\s*(?:connect|udpSocket)\s*\(/g },
  { name: "node socket module", re: /(?:\bfrom|\brequire\s*\(|\bimport\s*\()\s*["'](?:node:)?(?:net|tls|http|https|http2|dgram)["']/g },
  { name: "net/tls connect", re: /\b(?:net|tls)\s*\.\s*connect\s*\(|\bcreateConnection\s*\(/g },
  { name: "MQTT.js connect", re: /\bimport\s*\{[^}]*\bconnect(?:Async)?\b[^}]*\}\s*from\s*["']mqtt["']|\bmqtt\s*\.\s*connect(?:Async)?\s*\(/g },
  { name: "NATS connect", re: /\bimport\s*\{[^}]*\b(?:connect|wsconnect)\b[^}]*\}\s*from\s*["'](?:@nats-io\/[\w-]+|nats)["']/g },
  { name: "Redis client", re: /\bnew\s+RedisClient\s*\(|\bBun\s*\.\s*redis\b|\bimport\s*\{[^}]*\bredis\b[^}]*\}\s*from\s*["']bun["']/g },
  { name: "SQL client", re: /\bnew\s+SQL\s*\(|\bBun\s*\.\s*sql\b|\bimport\s*\{[^}]*\bsql\b[^}]*\}\s*from\s*["']bun["']/g },
];

/** Where a regex literal may start: after these (a `/` elsewhere divides). */
const BEFORE_REGEX = new Set(["", "(", ",", "=", ":", "[", "!", "&", "|", "?", "{", "}", ";", "+", "-", "*", "%", "<", ">", "~", "^"]);

/**
 * The source with comments blanked out (newlines kept, so line numbers hold). Strings, template
 * literals and regex literals are kept and skipped over, so `"http://"` or `/\/\//` start no comment.
 */
export function stripComments(src: string): string {
  let out = "";
  let i = 0;
  let last = ""; // the last significant character of code
  const blank = (s: string) => s.replace(/[^\n]/g, " ");
  while (i < src.length) {
    const c = src[i]!;
    const n = src[i + 1];
    if (c === "/" && n === "/") {
      const end = src.indexOf("\n", i);
      const stop = end < 0 ? src.length : end;
      out += blank(src.slice(i, stop));
      i = stop;
    } else if (c === "/" && n === "*") {
      const end = src.indexOf("*/", i + 2);
      const stop = end < 0 ? src.length : end + 2;
      out += blank(src.slice(i, stop));
      i = stop;
    } else if (c === '"' || c === "'" || c === "`") {
      const start = i++;
      while (i < src.length && src[i] !== c && (c === "`" || src[i] !== "\n")) i += src[i] === "\\" ? 2 : 1;
      out += src.slice(start, ++i);
      last = c;
    } else if (c === "/" && (BEFORE_REGEX.has(last) || /\b(?:return|typeof|case|in|of)$/.test(out.trimEnd()))) {
      const start = i++;
      let cls = false;
      while (i < src.length && src[i] !== "\n" && (cls || src[i] !== "/")) {
        if (src[i] === "\\") i++;
        else if (src[i] === "[") cls = true;
        else if (src[i] === "]") cls = false;
        i++;
      }
      out += src.slice(start, ++i);
      last = "/";
    } else {
      out += c;
      if (!/\s/.test(c)) last = c;
      i++;
    }
  }
  return out;
}

/** `file:line: <opener>` for every connection `src` opens. */
export function openings(file: string, src: string): string[] {
  const code = stripComments(src);
  const found: string[] = [];
  for (const o of OPENERS) {
    for (const m of code.matchAll(o.re)) found.push(`${file}:${code.slice(0, m.index).split("\n").length}: ${o.name}`);
  }
  return found;
}

/** Every source file of lib/ and of generated/ (the built parser and console script), and cli.ts. */
function sources(): string[] {
  const under = (dir: string) =>
    readdirSync(join(ROOT, dir), { recursive: true, encoding: "utf8" })
      .filter((f) => /\.(ts|js|mjs)$/.test(f) && !f.endsWith(".d.ts"))
      .map((f) => `${dir}/${f.split("\\").join("/")}`);
  return [...under("lib"), ...under("generated"), "cli.ts"].sort();
}

const scan = sources().map((file) => ({ file, found: openings(file, readFileSync(join(ROOT, file), "utf8")) }));

describe("one outbound client", () => {
  test("the scan sees the code base and the outbound module's own connections", () => {
    expect(scan.length).toBeGreaterThan(300);
    const inModule = scan.filter((s) => s.file.startsWith(OUTBOUND)).flatMap((s) => s.found.map((f) => f.replace(/^.*: /, "")));
    expect(new Set(inModule)).toEqual(new Set(["fetch", "WebSocket", "Bun.connect", "MQTT.js connect", "NATS connect", "Redis client", "SQL client"]));
  });

  test("no connection is opened in lib/, generated/ or cli.ts outside lib/net/ (beyond the listed exceptions)", () => {
    const outside = scan.filter((s) => !s.file.startsWith(OUTBOUND) && !EXCEPTIONS.some((x) => s.file.startsWith(x.prefix)));
    expect(outside.flatMap((s) => s.found)).toEqual([]);
  });

  test("every exception still opens a connection (remove it once it no longer does)", () => {
    const stale = EXCEPTIONS.filter((x) => !scan.some((s) => s.file.startsWith(x.prefix) && s.found.length > 0)).map((x) => x.prefix);
    expect(stale).toEqual([]);
  });
});

describe("the scanner", () => {
  test.each([
    ["const r = await fetch(url, { method: 'POST' });", "fetch"],
    ["return fetch(`${base}/x`);", "fetch"],
    ["globalThis.fetch(u)", "fetch"],
    ["const f = Bun.fetch(u);", "fetch"],
    ["const ws = new WebSocket(url, { headers });", "WebSocket"],
    ["new EventSource(u)", "EventSource/XMLHttpRequest"],
    ["Bun.connect({ hostname, port, socket })", "Bun.connect"],
    ["Bun.udpSocket({})", "Bun.connect"],
    ['import { connect } from "node:net";', "node socket module"],
    ['import * as tls from "tls";', "node socket module"],
    ['const http = require("node:http");', "node socket module"],
    ['const h = await import("node:https");', "node socket module"],
    ["net.connect(80, host)", "net/tls connect"],
    ["tls.connect({ host })", "net/tls connect"],
    ["socket = createConnection({ port })", "net/tls connect"],
    ['import { connect, MqttClient } from "mqtt";', "MQTT.js connect"],
    ['import { connectAsync } from "mqtt";', "MQTT.js connect"],
    ["mqtt.connect(url)", "MQTT.js connect"],
    ['import { connect, type NatsConnection } from "@nats-io/transport-node";', "NATS connect"],
    ['import { wsconnect } from "@nats-io/nats-core";', "NATS connect"],
    ['const c = new RedisClient("redis://h");', "Redis client"],
    ["await Bun.redis.get(k)", "Redis client"],
    ['import { redis } from "bun";', "Redis client"],
    ["const db = new SQL(options);", "SQL client"],
    ['import { sql, YAML } from "bun";', "SQL client"],
  ])("catches %s", (snippet, name) => {
    expect(openings("x.ts", `const a = 1;\n${snippet}\n`)).toEqual([`x.ts:2: ${name}`]);
  });

  test.each([
    ["// a comment that says fetch(url) and new WebSocket(u)"],
    ["/* Bun.connect(opts)\n   new RedisClient(x) */"],
    ['const u = "http://host/x"; const t = guard.fetch(u, init);'],
    ["const consumer = js.consumers.fetch(opts);"],
    ["Bun.serve({ fetch(req) { return new Response(); } });"],
    ["Bun.serve({ async fetch(req, server): Promise<Response> { return r; } });"],
    ['const re = /^https?:\\/\\//i; if (re.test(u)) x();'],
    ['import { YAML } from "bun"; import type { SQL } from "bun";'],
    ['import { MqttClient } from "mqtt";'],
    ['import { headers, type ConnectionOptions } from "@nats-io/transport-node";'],
    ['const scheme = "http"; const mod = "net";'],
    ["const refetch = prefetch(x);"],
  ])("lets %s pass", (snippet) => {
    expect(openings("x.ts", snippet)).toEqual([]);
  });

  test("a planted violation in a real file is caught with its line", () => {
    const file = "lib/connectors/http/sink.ts";
    const src = readFileSync(join(ROOT, file), "utf8");
    expect(openings(file, src)).toEqual([]);
    const planted = src.replace("export class RestSink", "const sneak = () => fetch(\"http://127.0.0.1/\");\nexport class RestSink");
    const line = planted.split("\n").findIndex((l) => l.includes("sneak")) + 1;
    expect(openings(file, planted)).toEqual([`${file}:${line}: fetch`]);
  });
});
