/**
 * The LIKE pattern → regular expression translation of eKuiper (sql §5.7), exactly: `%` → `.*`,
 * `_` → `.`, `\%`/`\_` kept, then every backslash doubled, then anchored. Other regex
 * metacharacters are not escaped [quirk].
 */
export function compileLikeSource(pattern: string): string {
  let out = "";
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === "\\" && (pattern[i + 1] === "%" || pattern[i + 1] === "_")) {
      out += c + pattern[i + 1];
      i++;
    } else if (c === "%") out += ".*";
    else if (c === "_") out += ".";
    else out += c;
  }
  return "^" + out.replace(/\\/g, "\\\\") + "$";
}
