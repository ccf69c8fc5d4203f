/**
 * The nesting limit of JSON that floe accepts, in payloads and in definitions. eKuiper's decoder
 * (fastjson) refuses values nested deeper than 300 and counts the message as a decode error;
 * floe does the same, which also keeps every recursive walk of a row or a definition (encoders,
 * templates, the exact number parser, Go-JSON re-marshalling) far from the stack's end.
 *
 * Depth is fastjson's: the top-level value is at depth 1 and each container adds one for what it
 * holds, so 300 nested objects are allowed only when the innermost is empty.
 */

/** eKuiper's (fastjson's) MaxDepth. */
export const MAX_JSON_DEPTH = 300;

/** The decode error of a payload past the limit (fastjson's words). */
export const DEPTH_ERROR = `cannot parse JSON: too big depth for the nested JSON; it exceeds ${MAX_JSON_DEPTH}`;

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
 * Hot path: a payload shorter than 2·max bytes cannot be that deep and costs one compare (the
 * bench workloads' telemetry is ~100 B); a longer one is scanned once, byte by byte, which costs
 * 20–100 % of JSON.parse on the same bytes (bench/json-depth.ts).
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

/** Whether an already parsed value nests deeper than `max` (definitions built in memory). */
export function valueTooDeep(v: unknown, max = MAX_JSON_DEPTH): boolean {
  return deeper(v, 1, max);
}

function deeper(v: unknown, depth: number, max: number): boolean {
  if (depth > max) return true;
  if (v === null || typeof v !== "object") return false;
  if (Array.isArray(v)) {
    for (const x of v) if (deeper(x, depth + 1, max)) return true;
    return false;
  }
  for (const k in v as Record<string, unknown>) if (deeper((v as Record<string, unknown>)[k], depth + 1, max)) return true;
  return false;
}
