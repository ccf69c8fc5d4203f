/**
 * eKuiper's date pattern language (`yyyy-MM-dd HH:mm:ssSSS`, functions §7.1) translated to a Go
 * reference layout, exactly as eKuiper's `convertFormat` does it — including passing unknown
 * characters through, where Go may then read them as layout tokens.
 */
import { RowError } from "../errors.ts";

/** Length of the run of `r` starting at `i`, counted up to `max + 1` like eKuiper's loop. */
function runLength(chars: string[], i: number, r: string, max: number): number {
  let j = 1;
  for (; i + j < chars.length && j <= max; j++) if (chars[i + j] !== r) break;
  return j;
}

const cache = new Map<string, string | RowError>();

/** Translates an eKuiper pattern to a Go layout; throws RowError for an invalid pattern. */
export function patternToLayout(pattern: string): string {
  let out = cache.get(pattern);
  if (out === undefined) {
    out = translate(pattern);
    if (cache.size > 1000) cache.clear();
    cache.set(pattern, out);
  }
  if (out instanceof RowError) throw out;
  return out;
}

function translate(f: string): string | RowError {
  const chars = Array.from(f);
  const n = chars.length;
  let out = "";
  for (let i = 0; i < n; i++) {
    const r = chars[i]!;
    switch (r) {
      case "Y":
      case "y": {
        const j = runLength(chars, i, r, 4);
        i += j - 1;
        if (j === 4) out += "2006";
        else if (j === 2) out += "06";
        else return new RowError(`invalid time format ${f} for Y/y`);
        break;
      }
      case "G":
        out += "AD";
        break;
      case "M": {
        const j = runLength(chars, i, r, 4);
        i += j - 1;
        // eKuiper quirk: a run of five or more emits nothing for the first five letters.
        out += ["", "1", "01", "Jan", "January"][j] ?? "";
        break;
      }
      case "d": {
        const j = runLength(chars, i, r, 2);
        i += j - 1;
        out += ["", "2", "02"][j] ?? "";
        break;
      }
      case "E": {
        const j = runLength(chars, i, r, 4);
        i += j - 1;
        if (j === 3) out += "Mon";
        else if (j === 4) out += "Monday";
        else return new RowError(`invalid time format ${f} for E`);
        break;
      }
      case "H": {
        const j = runLength(chars, i, r, 2);
        i += j - 1;
        if (j !== 2) return new RowError(`invalid time format ${f} of H, only HH is supported`);
        out += "15";
        break;
      }
      case "h":
      case "m":
      case "s": {
        const j = runLength(chars, i, r, 2);
        i += j - 1;
        const one = r === "h" ? "3" : r === "m" ? "4" : "5";
        out += j === 1 ? one : j === 2 ? (r === "h" ? "03" : r === "m" ? "04" : "05") : "";
        break;
      }
      case "a":
        out += "PM";
        break;
      case "S": {
        let j = 1;
        while (i + j < n && chars[i + j] === "S") j++;
        i += j - 1;
        out += "." + "0".repeat(j);
        break;
      }
      case "z":
        out += "MST";
        break;
      case "Z":
        out += "-0700";
        break;
      case "X": {
        const j = runLength(chars, i, r, 3);
        i += j - 1;
        out += ["", "-07", "-0700", "-07:00"][j] ?? "";
        break;
      }
      case "'": {
        if (chars[i + 1] === "'") {
          out += "'";
          i++;
          break;
        }
        // Quoted literal up to the next quote, or to the end when unterminated.
        let j = 1;
        for (; i + j < n && chars[i + j] !== "'"; j++) out += chars[i + j];
        i += j;
        break;
      }
      case "\\":
        if (i + 1 >= n) return new RowError(`${f} is invalid`);
        out += chars[++i];
        break;
      default:
        out += r;
    }
  }
  return out;
}
