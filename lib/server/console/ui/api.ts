/**
 * The REST API as the console calls it: the same endpoints as the CLI, with the JWT the user
 * typed (kept in sessionStorage) when the server asks for one; the live stream `/ui/events`
 * read with fetch (EventSource cannot send the Authorization header).
 */
const TOKEN = "floe.token";

export class HttpError extends Error {
  constructor(readonly status: number, message: string) {
    super(message);
  }
}

function headers(extra: Record<string, string> = {}): Record<string, string> {
  const t = sessionStorage.getItem(TOKEN);
  return t ? { ...extra, Authorization: t } : extra;
}

export function setToken(t: string): void {
  if (t) sessionStorage.setItem(TOKEN, t);
  else sessionStorage.removeItem(TOKEN);
}

/** Called when the server answers 401: the shell asks for a token. */
export let onUnauthorized: (message: string) => void = () => {};
export function setUnauthorizedHandler(fn: (message: string) => void): void {
  onUnauthorized = fn;
}

/** One call; the body of an error answer (eKuiper's `{"error_code","message"}` or text) becomes the Error's message. */
export async function call(method: string, path: string, body?: unknown): Promise<unknown> {
  const init: RequestInit = { method, headers: headers(body === undefined ? {} : { "Content-Type": "application/json" }) };
  if (body !== undefined) init.body = typeof body === "string" ? body : JSON.stringify(body);
  const res = await fetch(path, init);
  const text = await res.text();
  if (res.status === 401) onUnauthorized(text.trim());
  if (!res.ok) {
    let msg = text.trim();
    try {
      const j = JSON.parse(text) as { message?: string };
      if (j && typeof j.message === "string") msg = j.message;
    } catch {
      // plain text
    }
    throw new HttpError(res.status, msg || `${res.status} ${res.statusText}`);
  }
  if (!text) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** Reads an SSE response until `signal` aborts, calling `on(event, data)` per event. */
export async function readEvents(url: string, signal: AbortSignal, on: (event: string, data: string) => void, auth = true): Promise<void> {
  const res = await fetch(url, { headers: auth ? headers() : {}, signal });
  if (res.status === 401) onUnauthorized((await res.text()).trim());
  if (!res.ok || !res.body) throw new HttpError(res.status, `${url}: ${res.status}`);
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  let buf = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buf += value;
    let i: number;
    while ((i = buf.indexOf("\n\n")) >= 0) {
      const block = buf.slice(0, i);
      buf = buf.slice(i + 2);
      let event = "message";
      const data: string[] = [];
      for (const line of block.split("\n")) {
        if (line.startsWith("event:")) event = line.slice(6).trim();
        else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
      }
      if (data.length) on(event, data.join("\n"));
    }
  }
}
