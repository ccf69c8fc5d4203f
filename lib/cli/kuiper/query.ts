/**
 * `kuiper query` (config-and-cli.md §8.6): a REPL over trial runs. Each SELECT becomes the trial
 * `internal-ekuiper_query_rule` (`POST /ruletest`), whose results arrive as Server-Sent Events
 * from the server's data port and are printed as they come.
 */
import { createInterface } from "node:readline";
import { errorMessage, ok, type Client } from "./client.ts";

const QUERY_ID = "internal-ekuiper_query_rule";

export async function queryCommand(c: Client, input: NodeJS.ReadableStream = process.stdin): Promise<void> {
  const rl = createInterface({ input, terminal: false });
  let abort: AbortController | undefined;
  c.print("kuiper > ");
  for await (const line of rl) {
    const text = line.trim();
    if (/^(quit|exit)$/i.test(text)) break;
    if (text === "") {
      c.print("kuiper > ");
      continue;
    }
    abort?.abort();
    await c.call("DELETE", `/ruletest/${QUERY_ID}`);
    const r = await c.call("POST", "/ruletest", { id: QUERY_ID, sql: text });
    if (!ok(r)) {
      c.print(errorMessage(r).replace(/^fail to run rule [^:]*: /, "") + "\n");
      c.print("kuiper > ");
      continue;
    }
    const { port } = JSON.parse(r.text) as { port: number };
    const host = new URL(c.base).hostname;
    abort = new AbortController();
    void follow(c, `http://${host}:${port}/test/${QUERY_ID}`, abort.signal);
    await c.call("POST", `/ruletest/${QUERY_ID}/start`);
    c.print("Query was submit successfully.\n");
    c.print("kuiper > ");
  }
  abort?.abort();
  await c.call("DELETE", `/ruletest/${QUERY_ID}`);
}

async function follow(c: Client, url: string, signal: AbortSignal): Promise<void> {
  try {
    const res = await fetch(url, { signal });
    if (!res.body) return;
    let buf = "";
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      buf += new TextDecoder().decode(chunk);
      let i: number;
      while ((i = buf.indexOf("\n\n")) >= 0) {
        const ev = buf.slice(0, i);
        buf = buf.slice(i + 2);
        if (ev.startsWith("data: ")) c.print(ev.slice(6) + "\n");
      }
    }
  } catch {
    // aborted or the server went away
  }
}
