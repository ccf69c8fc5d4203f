/**
 * The hostile-input suite's map of floe's attack surface, read from the code rather than copied:
 * every route of the live REST route table (with `/metrics` on the REST port) and of the web
 * console, so a route added later is attacked the day it lands. Also: concrete paths naming the
 * objects `seed` creates, a daemon starter, a snapshot of everything a request could change, and
 * raw HTTP for what fetch cannot send.
 */
import { connect } from "node:net";
import { consoleRoutes } from "../../lib/server/console/index.ts";
import { routeTable } from "../../lib/server/index.ts";
import { freePort } from "../helpers/data-server.ts";
import { startFloe, tempHome, type DaemonProc } from "../server/daemon.ts";

export { freePort, startFloe, tempHome, type DaemonProc };

export interface SurfaceRoute {
  readonly method: string;
  /** The registered template (`/rules/{name}`). */
  readonly path: string;
  /** Marked as serving nothing sensitive: any origin may read it. */
  readonly open: boolean;
}

/** Every route a daemon with the console and `/metrics` on its REST port serves. */
export function surface(): SurfaceRoute[] {
  return [...routeTable(true), ...consoleRoutes].map((r) => ({ method: r.method, path: r.path, open: r.open === true }));
}

/** The name every fixture of `seed` has (the table's differs: streams and tables share names). */
export const VICTIM = "victim";
const TABLE = `${VICTIM}_table`;

/** The template with each parameter naming a seeded object: schema type `protobuf`, connector type `mqtt`, else `victim`. */
export function concrete(path: string): string {
  return path
    .replace("/tables/{name}", `/tables/${TABLE}`)
    .replace("{type}", "protobuf")
    .replace(/^\/metadata\/(sources|sinks|connections)(\/yaml|\/connection)?\/\{name\}/, (_m, kind: string, sub = "") => `/metadata/${kind}${sub}/mqtt`)
    .replace(/\{\w+\}/g, VICTIM);
}

/** Routes that end the daemon when they succeed: walkers that must not stop it skip them. */
export function endsDaemon(r: SurfaceRoute): boolean {
  return r.path === "/stop";
}

/** A secret seeded into a confKey: no foreign page may read it. */
export const SECRET = "s3cret-pw";

const PROTO = 'syntax = "proto3"; message M { int64 a = 1; }';

/** Creates an object of every kind a route names (all called `victim`), as a client without Origin. */
export async function seed(d: DaemonProc): Promise<void> {
  const json = { "Content-Type": "application/json" };
  const calls: [string, string, object][] = [
    ["POST", "/streams", { sql: `CREATE STREAM ${VICTIM} () WITH (TYPE="memory", DATASOURCE="${VICTIM}")` }],
    ["POST", "/tables", { sql: `CREATE TABLE ${TABLE} () WITH (TYPE="memory", DATASOURCE="${VICTIM}t", KIND="lookup", KEY="id")` }],
    ["POST", "/rules", { id: VICTIM, sql: `SELECT * FROM ${VICTIM}`, actions: [{ nop: {} }], tags: [VICTIM] }],
    ["POST", "/connections", { id: VICTIM, typ: "websocket", props: { path: `/${VICTIM}` } }],
    ["POST", "/config/uploads", { name: VICTIM, content: "x" }],
    ["POST", "/udf/javascript", { id: VICTIM, script: `function ${VICTIM}() { return 1; }` }],
    ["POST", "/schemas/protobuf", { name: VICTIM, content: PROTO }],
    ["PUT", `/metadata/sources/mqtt/confKeys/${VICTIM}`, { server: "tcp://127.0.0.1:1", password: SECRET }],
    ["PUT", `/metadata/sinks/mqtt/confKeys/${VICTIM}`, { server: "tcp://127.0.0.1:1", password: SECRET }],
    ["PUT", `/metadata/connections/mqtt/confKeys/${VICTIM}`, { server: "tcp://127.0.0.1:1", password: SECRET }],
    ["POST", "/ruletest", { id: VICTIM, sql: `SELECT * FROM ${VICTIM}`, mockSource: { [VICTIM]: { data: [{ id: 1 }], interval: 1000 } } }],
  ];
  for (const [method, path, body] of calls) {
    const r = await d.call(method, path, body, json);
    if (r.status >= 300) throw new Error(`seed ${method} ${path}: ${r.status} ${r.text}`);
  }
}

/** Everything a request could have changed: definitions and secrets (the full export), rules' states, UDFs, schemas, uploads, trials. */
export async function snapshot(d: DaemonProc): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const path of ["/v2/data/export", "/rules", "/udf/javascript", "/schemas/protobuf", `/schemas/protobuf/${VICTIM}`, "/config/uploads", "/connections", "/metadata/sources/yaml/mqtt"]) {
    const r = await d.call("GET", path);
    out[path] = `${r.status} ${r.text}`;
  }
  return out;
}

export interface RawResponse {
  readonly status: number;
  readonly head: string;
  readonly body: string;
}

/** Sends `request` (a complete HTTP/1.1 request) on a new connection; the first response once it is complete or the server closes. */
export function rawHttp(port: number, request: string | Uint8Array, timeoutMs = 5000): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const sock = connect(port, "127.0.0.1");
    let buf = Buffer.alloc(0);
    const done = (): boolean => {
      const end = buf.indexOf("\r\n\r\n");
      if (end < 0) return false;
      const head = buf.subarray(0, end).toString("latin1");
      const len = /\r\ncontent-length:\s*(\d+)/i.exec(head);
      const status = Number(/^HTTP\/1\.1 (\d+)/.exec(head)?.[1] ?? 0);
      const body = buf.subarray(end + 4);
      // A 101 (websocket) has no body; otherwise wait for Content-Length bytes.
      if (status !== 101 && len && body.length < Number(len[1])) return false;
      clearTimeout(timer);
      sock.destroy();
      resolve({ status, head, body: body.toString("utf8") });
      return true;
    };
    const timer = setTimeout(() => {
      sock.destroy();
      reject(new Error(`no complete response within ${timeoutMs} ms: ${buf.toString("latin1").slice(0, 200)}`));
    }, timeoutMs);
    sock.on("data", (c: Buffer) => {
      buf = Buffer.concat([buf, c]);
      done();
    });
    sock.on("end", () => {
      if (!done()) reject(new Error(`connection closed: ${buf.toString("latin1").slice(0, 200)}`));
    });
    sock.on("error", reject);
    sock.write(request);
  });
}

/** The status of a websocket upgrade of `path` on `port` (0 while nothing listens there). */
export async function upgradeStatus(port: number, path: string, host: string, headers: Record<string, string> = {}): Promise<number> {
  return (await rawHttp(port, upgradeRequest(path, host, headers)).catch(() => ({ status: 0 }))).status;
}

/** A websocket upgrade request for `path` with extra header lines. */
export function upgradeRequest(path: string, host: string, headers: Record<string, string> = {}): string {
  const extra = Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`).join("");
  return `GET ${path} HTTP/1.1\r\nHost: ${host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n${extra}\r\n`;
}

/** The refusal the origin policy answers: eKuiper's error body, 403. */
export const REFUSAL = /^\{"error":1000,"message":"request refused: [^\n]+"\}\n$/;
