/** Request bodies decoded with Go's `json.Decoder` error texts (rest-api.md §1.6). */
import { jsonKind } from "../value/go-json.ts";
import { jsonDecodeError } from "../store/rule-def.ts";
import type { Ctx } from "./router.ts";

export { field, isObject } from "../value/go-json.ts";

export type Decoded<T> = { ok: true; value: T; text: string } | { ok: false; error: string; text: string };

/** Decodes the body as JSON; `error` is Go's decoder message (`EOF`, `unexpected EOF`, `invalid character …`). */
export async function readJson<T = unknown>(ctx: Ctx): Promise<Decoded<T>> {
  const text = await ctx.text();
  const error = jsonDecodeError(text);
  if (error !== undefined) return { ok: false, error, text };
  return { ok: true, value: JSON.parse(text) as T, text };
}

/** Go type-mismatch text for decoding into a struct: `json: cannot unmarshal <kind> into Go value of type <t>`. */
export function unmarshalTypeError(v: unknown, goType: string): string {
  return `json: cannot unmarshal ${jsonKind(v)} into Go value of type ${goType}`;
}

/** Go `strconv.ParseBool`. */
export function parseBool(s: string | null): boolean {
  return s === "1" || s === "t" || s === "T" || s === "TRUE" || s === "true" || s === "True";
}
