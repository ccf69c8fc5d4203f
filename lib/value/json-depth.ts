/**
 * The nesting limit of JSON that floe accepts, in payloads and in definitions. eKuiper's decoder
 * (fastjson) refuses values nested deeper than 300 and counts the message as a decode error;
 * floe does the same, which also keeps every recursive walk of a row or a definition (encoders,
 * templates, the exact number parser, Go-JSON re-marshalling) far from the stack's end.
 *
 * Depth is fastjson's: the top-level value is at depth 1 and each container adds one for what it
 * holds, so 300 nested objects are allowed only when the innermost is empty.
 *
 * Payload decoders check the parsed value (`valueTooDeep`, after JSC's JSON.parse, which is not
 * recursive) and only when the text is at least MIN_DEEP_LENGTH long: a walk of the containers
 * costs 8–22 % of the parse, where a byte scan of the text would cost 25–50 % (bench/json-depth.ts). The scans serve the texts that a recursive parser reads (pipe mode's
 * exact number parser) and the definitions.
 */

/** eKuiper's (fastjson's) MaxDepth. */
export const MAX_JSON_DEPTH = 300;

/** The decode error of a payload past the limit (fastjson's words). */
export const DEPTH_ERROR = `cannot parse JSON: too big depth for the nested JSON; it exceeds ${MAX_JSON_DEPTH}`;

/** Shorter JSON cannot nest deeper than the limit (it needs 301 opening and closing brackets). */
export const MIN_DEEP_LENGTH = 2 * MAX_JSON_DEPTH;

/** The refusal of a definition (REST body, stored rule, confKey) past the limit. */
export const DEFINITION_TOO_DEEP = `exceeded max depth: the JSON nests deeper than ${MAX_JSON_DEPTH} levels`;

const LBRACE = 123;
const LBRACKET = 91;
const RBRACE = 125;
const RBRACKET = 93;
const QUOTE = 34;
const BACKSLASH = 92;

/**
 * Whether the JSON bytes nest deeper than `max` (syntax is not checked: JSON.parse does that).
 * A payload shorter than 2·max bytes cannot be that deep and costs one compare; a longer one is
 * scanned once, byte by byte, stopping at the first container past the limit.
 */
export function bytesTooDeep(p: Uint8Array, max = MAX_JSON_DEPTH): boolean {
  const n = p.length;
  if (n < 2 * max) return false;
  let depth = 0;
  for (let i = 0; i < n; i++) {
    const c = p[i]!;
    if (c === QUOTE) {
      // Skip the string: brackets inside it do not nest.
      for (i++; i < n; i++) {
        const d = p[i]!;
        if (d === BACKSLASH) i++;
        else if (d === QUOTE) break;
      }
    } else if (c === LBRACE || c === LBRACKET) {
      if (++depth >= max && (depth > max || !closesNext(p, i + 1))) return true;
    } else if (c === RBRACE || c === RBRACKET) depth--;
  }
  return false;
}

/** The first non-blank byte after `i` closes a container (the container at the limit is empty). */
function closesNext(p: Uint8Array, i: number): boolean {
  while (i < p.length && (p[i] === 32 || p[i] === 9 || p[i] === 10 || p[i] === 13)) i++;
  return p[i] === RBRACE || p[i] === RBRACKET;
}

/** `bytesTooDeep` for JSON text (pipe-mode lines, REST bodies, stored definitions). */
export function textTooDeep(s: string, max = MAX_JSON_DEPTH): boolean {
  const n = s.length;
  if (n < 2 * max) return false;
  let depth = 0;
  for (let i = 0; i < n; i++) {
    const c = s.charCodeAt(i);
    if (c === QUOTE) {
      for (i++; i < n; i++) {
        const d = s.charCodeAt(i);
        if (d === BACKSLASH) i++;
        else if (d === QUOTE) break;
      }
    } else if (c === LBRACE || c === LBRACKET) {
      if (++depth >= max && (depth > max || !textClosesNext(s, i + 1))) return true;
    } else if (c === RBRACE || c === RBRACKET) depth--;
  }
  return false;
}

function textClosesNext(s: string, i: number): boolean {
  let c = s.charCodeAt(i);
  while (c === 32 || c === 9 || c === 10 || c === 13) c = s.charCodeAt(++i);
  return c === RBRACE || c === RBRACKET;
}

/** Whether an already parsed value nests deeper than `max` (same depth as the scans above). */
export function valueTooDeep(v: unknown, max = MAX_JSON_DEPTH): boolean {
  return v !== null && typeof v === "object" && containerTooDeep(v as object, 1, max);
}

/** A container at `depth`: its children are at depth + 1; only containers are descended into. */
function containerTooDeep(v: object, depth: number, max: number): boolean {
  if (Array.isArray(v)) {
    if (v.length > 0 && depth >= max) return true;
    for (let i = 0; i < v.length; i++) {
      const x: unknown = v[i];
      if (x !== null && typeof x === "object" && containerTooDeep(x, depth + 1, max)) return true;
    }
    return false;
  }
  if (v instanceof Uint8Array) return depth > max;
  const o = v as Record<string, unknown>;
  for (const k in o) {
    if (depth >= max) return true;
    const x = o[k];
    if (x !== null && typeof x === "object" && containerTooDeep(x, depth + 1, max)) return true;
  }
  return false;
}
