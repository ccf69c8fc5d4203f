/**
 * eKuiper decodes a token's claims into golang-jwt v5's `RegisteredClaims` (embedded in its
 * `Token` struct) with encoding/json, so every registered claim is type-checked before the key is
 * even looked up: `iss`/`sub`/`jti` strings, `exp`/`nbf`/`iat` NumericDate (a JSON number, or a
 * string holding one: `"1"` is second 1 of 1970), `aud` a string or an array of strings. A wrong
 * type makes the token malformed. Keys match case-insensitively and the last duplicate wins, as
 * in encoding/json; errors follow its order (a NumericDate or audience error stops the decoding
 * at once, a plain type mismatch is kept and reported at the end).
 */
import { goQuote } from "../value/values.ts";

export interface RegisteredClaims {
  iss: string;
  aud: string[];
  /** Seconds since the epoch (NumericDate truncated to the second), when present. */
  exp: number | undefined;
  nbf: number | undefined;
  iat: number | undefined;
}

const STRING_FIELDS = ["iss", "sub", "jti"] as const;
const DATE_FIELDS = ["exp", "nbf", "iat"] as const;
const FIELDS = [...STRING_FIELDS, ...DATE_FIELDS, "aud"] as const;
type Field = (typeof FIELDS)[number];

/** encoding/json's `isValidNumber`. */
const NUMBER = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/;

function kind(v: unknown): string {
  if (typeof v === "number") return "number";
  if (typeof v === "boolean") return "bool";
  if (typeof v === "string") return "string";
  return Array.isArray(v) ? "array" : "object";
}

/** encoding/json's field match: the exact name, else a case-insensitive one. */
function fieldOf(key: string): Field | undefined {
  if ((FIELDS as readonly string[]).includes(key)) return key as Field;
  const k = key.toLowerCase();
  return FIELDS.find((f) => f === k);
}

/** `NumericDate.UnmarshalJSON`: seconds, or the error text. */
function numericDate(v: unknown): number | string {
  let n: number;
  if (typeof v === "number") n = v;
  else if (typeof v === "string") {
    if (!NUMBER.test(v)) return `could not parse NumericDate: json: invalid number literal, trying to unmarshal ${goQuote(JSON.stringify(v))} into Number`;
    n = Number(v);
    if (!Number.isFinite(n)) return `could not convert json number value to float: strconv.ParseFloat: parsing ${goQuote(v)}: value out of range`;
  } else return `could not parse NumericDate: json: cannot unmarshal ${kind(v)} into Go value of type json.Number`;
  return Math.trunc(n);
}

/**
 * Decodes the registered claims of a claims object; a string is the error golang-jwt reports
 * after `token is malformed: could not JSON decode claim: `.
 */
export function decodeClaims(o: Record<string, unknown>): RegisteredClaims | string {
  const out: RegisteredClaims = { iss: "", aud: [], exp: undefined, nbf: undefined, iat: undefined };
  let saved: string | undefined;
  for (const key of Object.keys(o)) {
    const f = fieldOf(key);
    if (!f) continue;
    const v = o[key];
    // null leaves a field as it is (a nil pointer for the dates).
    if (v === null) continue;
    if (f === "aud") {
      if (typeof v === "string") out.aud = [v];
      else if (Array.isArray(v) && v.every((x) => typeof x === "string")) out.aud = v as string[];
      else return "invalid type for claim";
    } else if (f === "exp" || f === "nbf" || f === "iat") {
      const d = numericDate(v);
      if (typeof d === "string") return d;
      out[f] = d;
    } else if (typeof v === "string") {
      if (f === "iss") out.iss = v;
    } else saved ??= `json: cannot unmarshal ${kind(v)} into Go struct field Token.${f} of type string`;
  }
  return saved ?? out;
}

/** golang-jwt v5's validator (no leeway) and eKuiper's `iat` check: the joined claim errors, or undefined. */
export function claimsInvalid(c: RegisteredClaims, nowMs: number): string | undefined {
  const errs: string[] = [];
  if (c.exp !== undefined && nowMs >= c.exp * 1000) errs.push("token is expired");
  if (c.nbf !== undefined && nowMs < c.nbf * 1000) errs.push("token is not valid yet");
  if (c.iat !== undefined && nowMs < c.iat * 1000) errs.push("token used before issued");
  return errs.length ? errs.join(", ") : undefined;
}
