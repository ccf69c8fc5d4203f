/**
 * Go `strconv.Unquote` for the string literals of a JSON path: `"…"` and `` `…` ``, and `'…'`
 * of any length (functions.md §9.2 accepts single-quoted strings, e.g. `$['name']`).
 */

const SIMPLE: Record<string, string> = {
  a: "\x07",
  b: "\b",
  f: "\f",
  n: "\n",
  r: "\r",
  t: "\t",
  v: "\v",
  "\\": "\\",
};

function hexValue(s: string): number | undefined {
  return /^[0-9a-fA-F]+$/.test(s) ? parseInt(s, 16) : undefined;
}

/** The unquoted text, or undefined for Go's `invalid syntax`. */
export function goUnquote(text: string): string | undefined {
  const n = text.length;
  if (n < 2) return undefined;
  const q = text[0]!;
  if (q !== text[n - 1]) return undefined;
  const body = text.slice(1, n - 1);
  if (q === "`") return body.includes("`") ? undefined : body.replace(/\r/g, "");
  if (q !== '"' && q !== "'") return undefined;
  if (!body.includes("\\")) return body.includes(q) || body.includes("\n") ? undefined : body;
  let out = "";
  for (let i = 0; i < body.length; ) {
    const c = body[i]!;
    if (c === q || c === "\n") return undefined;
    if (c !== "\\") {
      out += c;
      i++;
      continue;
    }
    const e = body[i + 1];
    if (e === undefined) return undefined;
    if (e in SIMPLE) {
      out += SIMPLE[e];
      i += 2;
    } else if (e === q || e === '"' || e === "'") {
      // Go allows only the enclosing quote; floe also accepts the other one inside '…'.
      if (q === '"' && e !== q) return undefined;
      out += e;
      i += 2;
    } else if (e === "x" || e === "u" || e === "U") {
      const len = e === "x" ? 2 : e === "u" ? 4 : 8;
      const v = hexValue(body.slice(i + 2, i + 2 + len));
      if (v === undefined || body.length < i + 2 + len) return undefined;
      if (e !== "x" && (v > 0x10ffff || (v >= 0xd800 && v < 0xe000))) return undefined;
      out += String.fromCodePoint(v);
      i += 2 + len;
    } else if (e >= "0" && e <= "7") {
      const oct = body.slice(i + 1, i + 4);
      if (!/^[0-7]{3}$/.test(oct)) return undefined;
      const v = parseInt(oct, 8);
      if (v > 255) return undefined;
      out += String.fromCodePoint(v);
      i += 4;
    } else return undefined;
  }
  return out;
}
