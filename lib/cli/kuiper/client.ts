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

export class Client {
  constructor(
    readonly base: string,
    readonly print: (s: string) => void,
  ) {}

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

/** Reads client.yaml from `etc` and prints eKuiper's connection lines; undefined when unreachable. */
export async function connect(etc: string | undefined, env: Record<string, string | undefined>, print: (s: string) => void): Promise<Client | undefined> {
  let doc: Doc = {};
  const file = etc ? join(etc, "client.yaml") : undefined;
  if (file && existsSync(file)) {
    const parsed = YAML.parse(readFileSync(file, "utf8"));
    if (isDoc(parsed)) doc = lowerKeys(parsed) as Doc;
    if (!("basic" in doc)) print("No basic config in client.yaml, will use the default configuration.\n");
  }
  applyEnv(doc, "CLIENT", env);
  const host = String(pick(doc, "basic", "host") ?? "127.0.0.1");
  const port = Number(pick(doc, "basic", "port") ?? 20498);
  print(`Connecting to ${host}:${port}... \n`);
  const h = host.includes(":") ? `[${host}]` : host;
  const client = new Client(`http://${h}:${port}`, print);
  try {
    await fetch(`${client.base}/ping`);
  } catch {
    print("Failed to connect the server, please start the server.\n");
    return undefined;
  }
  return client;
}
