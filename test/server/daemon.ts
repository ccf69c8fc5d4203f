/**
 * Starts a real `floe serve` subprocess on free ports with temporary etc/data dirs, and talks to
 * it over HTTP. Shared by the server tests.
 */
import { mkdtempSync, mkdirSync, writeFileSync } from "node:fs";
import { request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";

const ROOT = join(import.meta.dir, "..", "..");
const BUN = process.execPath;

export interface DaemonProc {
  readonly base: string;
  readonly restPort: number;
  readonly cliPort: number;
  readonly dir: string;
  readonly proc: ReturnType<typeof Bun.spawn>;
  /** Everything the daemon wrote to stderr so far. */
  stderr(): string;
  call(method: string, path: string, body?: string | object, headers?: Record<string, string>): Promise<{ status: number; text: string; headers: Headers }>;
  stop(signal?: NodeJS.Signals | number): Promise<number>;
}

export function tempHome(etcFiles: Record<string, string> = {}): string {
  const dir = mkdtempSync(join(tmpdir(), "floe-srv-"));
  mkdirSync(join(dir, "etc"), { recursive: true });
  mkdirSync(join(dir, "data"), { recursive: true });
  for (const [name, text] of Object.entries(etcFiles)) {
    const p = join(dir, "etc", name);
    mkdirSync(join(p, ".."), { recursive: true });
    writeFileSync(p, text);
  }
  return dir;
}

/**
 * Starts the daemon in `dir` (etc/ and data/ inside); resolves once it serves. Tests kill and
 * restart daemons in one dir on purpose, so the automatic safe start (after 3 early ends in a
 * row) is off unless a test sets FLOE_SAFE_AFTER_CRASHES; `args` are extra `serve` flags;
 * `floe` runs another build (dist/floe).
 */
export async function startFloe(dir: string = tempHome(), env: Record<string, string> = {}, args: string[] = [], floe: string[] = [BUN, join(ROOT, "cli.ts")]): Promise<DaemonProc> {
  const proc = Bun.spawn([...floe, "serve", "--etc", join(dir, "etc"), "--data", join(dir, "data"), ...args], {
    cwd: dir,
    env: { ...process.env, KUIPER__BASIC__RESTPORT: "0", KUIPER__BASIC__PORT: "0", KUIPER__SOURCE__HTTPSERVERPORT: "0", FLOE_SAFE_AFTER_CRASHES: "0", ...env },
    stdout: "pipe",
    stderr: "pipe",
  });
  let err = "";
  void (async () => {
    for await (const c of proc.stderr as ReadableStream<Uint8Array>) err += new TextDecoder().decode(c);
  })();
  const reader = (proc.stdout as ReadableStream<Uint8Array>).getReader();
  let out = "";
  const deadline = Date.now() + 15_000;
  let m: RegExpExecArray | null = null;
  while (!(m = /on port (\d+), and restful api on https?:\/\/[^:]+:(\d+)\./.exec(out))) {
    if (Date.now() > deadline) throw new Error(`floe serve did not start: ${out}\n${err}`);
    const { value, done } = await reader.read();
    if (done) throw new Error(`floe serve exited: ${out}\n${err}`);
    out += new TextDecoder().decode(value);
  }
  reader.releaseLock();
  const restPort = Number(m[2]);
  const base = `http://127.0.0.1:${restPort}`;
  return {
    base,
    restPort,
    cliPort: Number(m[1]),
    dir,
    proc,
    stderr: () => err,
    async call(method, path, body, headers = {}) {
      if ((method === "GET" || method === "HEAD") && body !== undefined) return getWithBody(base + path, method, typeof body === "string" ? body : JSON.stringify(body), headers);
      const init: RequestInit = { method, headers };
      if (body !== undefined) init.body = typeof body === "string" ? body : JSON.stringify(body);
      const res = await fetch(base + path, init);
      return { status: res.status, text: await res.text(), headers: res.headers };
    },
    async stop(signal: NodeJS.Signals | number = "SIGTERM") {
      proc.kill(signal);
      return await proc.exited;
    },
  };
}

/** fetch refuses a body on GET; eKuiper's `GET /rules/tags/match` takes one. */
function getWithBody(url: string, method: string, body: string, headers: Record<string, string>): Promise<{ status: number; text: string; headers: Headers }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method, headers: { ...headers, "Content-Length": String(Buffer.byteLength(body)) } }, (res) => {
      let text = "";
      res.on("data", (c: Buffer) => (text += c.toString("utf8")));
      res.on("end", () => {
        const h = new Headers();
        for (const [k, v] of Object.entries(res.headers)) if (typeof v === "string") h.set(k, v);
        resolve({ status: res.statusCode ?? 0, text, headers: h });
      });
    });
    req.on("error", reject);
    req.end(body);
  });
}
