/**
 * The `kuiper` CLI's connection (config-and-cli.md §8.1): `etc/client.yaml` (env prefix `CLIENT`)
 * names the server's CLI port (`basic.host`, `basic.port`, default 127.0.0.1:20498), which
 * `floe serve` answers with its REST API. Output goes through `print` so tests can capture it.
 */
import { YAML } from "bun";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { applyEnv, isDoc, lowerKeys, pick, type Doc } from "../../config/env.ts";

export interface Reply {
  readonly status: number;
  readonly text: string;
}

/**
 * How a verb ended, for `floe <verb>`'s exit status: 0 done, 1 the server refused or failed (or a
 * file could not be read or written), 2 the command line was wrong. `kuiper` always exits 0.
 */
export type Outcome = 0 | 1 | 2;

export class Client {
  outcome: Outcome = 0;
  constructor(
    readonly base: string,
    /** Results: standard output. */
    readonly print: (s: string) => void,
    /** Error sentences: standard error under `floe`, standard output under `kuiper`. */
    private readonly printError: (s: string) => void = print,
  ) {}

  /** Progress (`Creating a new rule from file …`): beside the error sentences, not among the results. */
  note(s: string): void {
    this.printError(s);
  }

  /** An error sentence for a failure of the server or of a file: exit 1 under `floe`. */
  fail(s: string): void {
    this.printError(s);
    if (this.outcome === 0) this.outcome = 1;
  }

  /** An error sentence for a wrong command line: exit 2 under `floe`. */
  usage(s: string): void {
    this.printError(s);
    this.outcome = 2;
  }

  async call(method: string, path: string, body?: unknown): Promise<Reply> {
    const init: RequestInit = { method };
    if (body !== undefined) {
      init.body = typeof body === "string" ? body : JSON.stringify(body);
      init.headers = { "Content-Type": "application/json" };
    }
    const res = await fetch(this.base + path, init);
    return { status: res.status, text: await res.text() };
  }
}

/** The `message` of an error body, or the text itself. */
export function errorMessage(r: Reply): string {
  try {
    const v = JSON.parse(r.text) as { message?: unknown };
    if (typeof v.message === "string") return v.message;
  } catch {
    // plain text
  }
  return r.text.replace(/\n$/, "");
}

export function ok(r: Reply): boolean {
  return r.status >= 200 && r.status < 300;
}

/** Go `json.MarshalIndent(v, "", indent)` of a parsed value (key order as parsed). */
export function indentJson(text: string, indent = "  "): string {
  return JSON.stringify(JSON.parse(text), null, indent).replace(/[<>&\u2028\u2029]/g, (c) => "\\u" + c.charCodeAt(0).toString(16).padStart(4, "0"));
}

/**
 * Reads client.yaml from `etc` and prints eKuiper's connection lines through `note` (standard error
 * under `floe`, so that standard output carries only results); undefined when unreachable.
 */
export async function connect(
  etc: string | undefined,
  env: Record<string, string | undefined>,
  print: (s: string) => void,
  note: (s: string) => void = print,
): Promise<Client | undefined> {
  let doc: Doc = {};
  const file = etc ? join(etc, "client.yaml") : undefined;
  if (file && existsSync(file)) {
    const parsed = YAML.parse(readFileSync(file, "utf8"));
    if (isDoc(parsed)) doc = lowerKeys(parsed) as Doc;
    if (!("basic" in doc)) note("No basic config in client.yaml, will use the default configuration.\n");
  }
  applyEnv(doc, "CLIENT", env);
  const host = String(pick(doc, "basic", "host") ?? "127.0.0.1");
  const port = Number(pick(doc, "basic", "port") ?? 20498);
  note(`Connecting to ${host}:${port}... \n`);
  const h = host.includes(":") ? `[${host}]` : host;
  const client = new Client(`http://${h}:${port}`, print, note);
  try {
    await fetch(`${client.base}/ping`);
  } catch {
    note("Failed to connect the server, please start the server.\n");
    return undefined;
  }
  return client;
}
