/**
 * The one reader of REST request bodies: bounded in bytes whichever way the body arrives
 * (with a Content-Length or chunked, read as text or as a multipart form), decoded as strict
 * UTF-8 and, for JSON, refused past the nesting limit before any handler walks it.
 */
import { compileLimits } from "../value/compile-budget.ts";
import { EngineError, ErrCode } from "../errors.ts";
import { DEFINITION_TOO_DEEP, textTooDeep } from "../value/json-depth.ts";
import { HttpError } from "./respond.ts";

/**
 * Definitions (rules, streams, tables, confKeys, connections, UDFs) are small: their bodies are
 * refused past 256 KiB before being read, so an 8 MB rule costs no decoding at all, and one at
 * the limit holds the loop for tens of ms at most (bench/limits.ts). Uploads, imports and
 * batches keep `basic.maxBodySize` (docs/daemon.md, "Errors, limits and the safe start").
 */
export const MAX_DEFINITION_BODY = 256 * 1024;
const DEFINITION_ROUTE = /^\/(?:v2\/)?(?:rules|streams|tables|metadata|udf|connections)(?:\/|$)/;
/** A schema as JSON (`content`, escaped: at most twice its bytes) — not the multipart upload, which may be a zip. */
const SCHEMA_ROUTE = /^\/schemas\/[^/]+(?:\/[^/]+)?\/?$/;

/** The body limit of a route path. */
export function bodyLimit(path: string, maxBodySize: number): number {
  if (DEFINITION_ROUTE.test(path)) return Math.min(maxBodySize, MAX_DEFINITION_BODY);
  if (SCHEMA_ROUTE.test(path)) return Math.min(maxBodySize, Math.max(MAX_DEFINITION_BODY, 2 * compileLimits().protoBytes + 4096));
  return maxBodySize;
}

/** Thrown when a body passes its limit; the pipeline answers 413. */
export class BodyTooLarge extends Error {}

/** Whether the declared Content-Length already passes the limit (the body is then never read). */
export function declaredTooLarge(req: Request, max: number): boolean {
  const len = Number(req.headers.get("Content-Length") ?? "");
  return Number.isFinite(len) && len > max;
}

/**
 * The request as handlers see it: a body sent without a length (chunked) is read here, up to the
 * limit, so every handler, `formData()` included, gets a body of known size or none at all.
 */
export async function boundedRequest(req: Request, max: number): Promise<Request> {
  if (!req.body || req.headers.has("Content-Length")) return req;
  const body = await readBytes(req, max);
  return new Request(req.url, { method: req.method, headers: req.headers, body, signal: req.signal });
}

async function readBytes(req: Request, max: number): Promise<Uint8Array> {
  if (!req.body) return new Uint8Array(0);
  const chunks: Uint8Array[] = [];
  let total = 0;
  for await (const c of req.body as unknown as AsyncIterable<Uint8Array>) {
    total += c.byteLength;
    if (total > max) throw new BodyTooLarge();
    chunks.push(c);
  }
  return Buffer.concat(chunks);
}

const utf8 = new TextDecoder("utf-8", { fatal: true });

/** The whole body as text: at most `max` bytes, strict UTF-8, JSON no deeper than the limit. */
export async function readBody(req: Request, max: number): Promise<string> {
  const bytes = await readBytes(req, max);
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch {
    // Go would replace the bad bytes silently: a secret or a payload would change unseen.
    throw new HttpError("request body is not valid UTF-8", ErrCode.undefined, 400);
  }
  return checkDepth(text);
}

/**
 * A JSON body nesting deeper than the payload limit is refused before any handler walks it:
 * every definition is stored so that it can be read back (encoders and masks recurse).
 */
function checkDepth(text: string): string {
  const c = /^\s*([[{])/.exec(text.length > 64 ? text.slice(0, 64) : text);
  if (c && textTooDeep(text)) throw new EngineError(DEFINITION_TOO_DEEP, ErrCode.undefined);
  return text;
}
