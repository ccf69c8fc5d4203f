/**
 * eKuiper's response styles (rest-api.md §1.6–§1.7): sentence, json, json-sniffed, error,
 * download, empty — status, bytes and Content-Type exactly as the Go handlers produce them.
 */
import { EngineError, ErrCode, errorText, RowError, TooLargeError } from "../errors.ts";
import { encodeGoJson } from "../value/json-encode.ts";
import { goQuote, type Value } from "../value/values.ts";
import { idError } from "../store/ids.ts";

export { goQuote };

const TEXT = "text/plain; charset=utf-8";

/** Go `html/template.HTMLEscapeString`. */
export function htmlEscape(s: string): string {
  return s.replace(/[<>&'"\u0000]/g, (c) => (c === "<" ? "&lt;" : c === ">" ? "&gt;" : c === "&" ? "&amp;" : c === "'" ? "&#39;" : c === '"' ? "&#34;" : "\uFFFD"));
}

/** Compact Go JSON of a plain JS value (objects keep insertion order: struct order). */
export function goJson(v: unknown): string {
  return encodeStruct(v);
}

function encodeStruct(v: unknown): string {
  if (v === undefined || v === null) return "null";
  if (Array.isArray(v)) return "[" + v.map(encodeStruct).join(",") + "]";
  if (typeof v === "object" && !(v instanceof Uint8Array) && v.constructor === Object) {
    const parts: string[] = [];
    for (const [k, x] of Object.entries(v)) if (x !== undefined) parts.push(encodeGoJson(k) + ":" + encodeStruct(x));
    return "{" + parts.join(",") + "}";
  }
  return encodeGoJson(v as Value);
}

/** A JSON value whose object keys are sorted (a Go map). */
export class GoMap {
  constructor(readonly value: unknown) {}
}

function encodeAny(v: unknown): string {
  if (v instanceof GoMap) return encodeGoJson(v.value as Value);
  return encodeStruct(v);
}

export function sentence(text: string, status = 200): Response {
  return new Response(text, { status, headers: { "Content-Type": TEXT } });
}

/** `application/json` with struct order kept (use GoMap for sorted keys). */
export function json(v: unknown, status = 200): Response {
  return new Response(encodeAny(v), { status, headers: { "Content-Type": "application/json" } });
}

/** The same bytes, Content-Type sniffed by Go as text/plain. */
export function jsonSniffed(v: unknown, status = 200): Response {
  return new Response(encodeAny(v), { status, headers: { "Content-Type": TEXT } });
}

export function rawJson(text: string, status = 200, sniffed = false): Response {
  return new Response(text, { status, headers: { "Content-Type": sniffed ? TEXT : "application/json" } });
}

/** The 400 (code 1000) for a path id that fails validation (rest-api.md §1.8), `prefix: ` first when given. */
export function idRefusal(id: string, prefix = ""): Response | undefined {
  const e = idError(id);
  return e ? errorBody(ErrCode.undefined, prefix ? `${prefix}: ${e}` : e) : undefined;
}

export function empty(status = 200): Response {
  return new Response(null, { status });
}

/** `{"error":<code>,"message":<%q>}\n`; 404 for code 1002 unless a status is given. */
export function errorBody(code: number, message: string, status?: number, nosniff = true): Response {
  const headers: Record<string, string> = { "Content-Type": TEXT };
  if (nosniff) headers["X-Content-Type-Options"] = "nosniff";
  return new Response(`{"error":${code},"message":${goQuote(message)}}\n`, { status: status ?? (code === ErrCode.notFound ? 404 : 400), headers });
}

/** An error raised inside a handler, carrying its eKuiper code and optional explicit status. */
export class HttpError extends Error {
  constructor(
    message: string,
    readonly code: number = ErrCode.undefined,
    readonly status?: number,
  ) {
    super(message);
  }
}

/** Maps any thrown value to the error body, adding `prefix: ` (eKuiper's handleError). */
export function fromError(e: unknown, prefix = ""): Response {
  const msg = prefix ? `${prefix}: ${errorText(e)}` : errorText(e);
  if (e instanceof HttpError) return errorBody(e.code, msg, e.status);
  if (e instanceof TooLargeError) return errorBody(e.code, msg, 413);
  if (e instanceof EngineError) return errorBody(e.code, msg);
  if (e instanceof RowError) return errorBody(ErrCode.undefined, msg);
  // A stack overflow (or another range failure) comes from what the request held: a 400, not a 500.
  if (e instanceof RangeError) return errorBody(ErrCode.undefined, `${msg} (the request nests too deeply or is too large)`);
  return errorBody(ErrCode.undefined, msg, 500);
}

/** A download (Go `http.ServeContent`): octet-stream, `Content-Disposition: Attachment`. */
export function download(body: string | Uint8Array, disposition = "Attachment"): Response {
  return new Response(body, {
    status: 200,
    headers: {
      "Content-Type": "application/octet-stream",
      "Content-Disposition": disposition,
      "Accept-Ranges": "bytes",
      "Last-Modified": new Date().toUTCString(),
    },
  });
}

export const PAGE_NOT_FOUND = () => new Response("404 page not found\n", { status: 404, headers: { "Content-Type": TEXT, "X-Content-Type-Options": "nosniff" } });
