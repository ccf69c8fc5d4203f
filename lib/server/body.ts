/** Request bodies decoded with Go's `json.Decoder` error texts (rest-api.md §1.6). */
import { jsonKind } from "../value/go-json.ts";
import { jsonDecodeError } from "../store/stored-rule.ts";
import type { Ctx } from "./router.ts";

export { field, isObject } from "../value/go-json.ts";

export type Decoded<T> = { ok: true; value: T; text: string } | { ok: false; error: string; text: string };

/** Decodes the body as JSON; `error` is Go's decoder message (`EOF`, `unexpected EOF`, `invalid character …`). */
export async function readJson<T = unknown>(ctx: Ctx): Promise<Decoded<T>> {
  const text = await ctx.text();
  // Parsed once: Go's error text is worked out only for a body that is not JSON.
  try {
    return { ok: true, value: JSON.parse(text) as T, text };
  } catch {
    return { ok: false, error: jsonDecodeError(text) ?? "unexpected EOF", text };
  }
}

/** Go type-mismatch text for decoding into a struct: `json: cannot unmarshal <kind> into Go value of type <t>`. */
export function unmarshalTypeError(v: unknown, goType: string): string {
  return `json: cannot unmarshal ${jsonKind(v)} into Go value of type ${goType}`;
}

/** Go `strconv.ParseBool`. */
export function parseBool(s: string | null): boolean {
  return s === "1" || s === "t" || s === "T" || s === "TRUE" || s === "true" || s === "True";
}
