/**
 * Go's regexp syntax (RE2, as of Go 1.25) translated to a JavaScript `u`-mode RegExp source.
 * The parser follows Go's regexp/syntax step by step, so a pattern Go rejects is rejected here with
 * Go's error code and fragment, and an accepted pattern means what it means in Go: ASCII `\d \s \w
 * \b`, POSIX classes, `.` excluding only `\n`, `(?imsU)` flags scoped like Go's, `\Q…\E`, octal and
 * `\x{…}` escapes. Case folding uses JS regexp modifiers `(?i:…)`; every other flag is compiled out.
 * Capture groups become unnamed JS groups; names are returned separately (Go allows duplicates).
 */
import {
  complement,
  foldClosure,
  isAlnum,
  isOctal,
  litSrc,
  MAX_RUNE,
  PERL,
  POSIX,
  rangeAtoms,
  unhex,
  type Ranges,
} from "./regex-charclass.ts";
import { classLeaf, leaf, prodOf, renderAlts, type Node } from "./regex-node.ts";
import { unicodeClass } from "./regex-unicode.ts";

/** Go's `*syntax.Error`; `message` is its `Error()` text. */
export class GoRegexpError {
  readonly message: string;
  constructor(code: string, expr: string) {
    this.message = `error parsing regexp: ${code}: \`${expr}\``;
  }
}

export interface GoTranslation {
  readonly source: string;
  /** Capture names by group index; index 0 (the whole match) and unnamed groups are "". */
  readonly names: readonly string[];
}

const FOLD = 1;
const ONE_LINE = 2;
const DOT_NL = 4;
const NON_GREEDY = 8;

class Parser {
  private i = 0;
  private flags = ONE_LINE;
  private depth = 0;
  readonly names: string[] = [""];

  constructor(private readonly s: string) {}

  private err(code: string, expr: string): GoRegexpError {
    return new GoRegexpError(code, expr);
  }
  private cpAt(i: number): number {
    return this.s.codePointAt(i)!;
  }
  private width(i: number): number {
    return this.cpAt(i) > 0xffff ? 2 : 1;
  }

  /** Parses up to an unmatched `)` (left in place) or the end; returns the alternatives. */
  parseAlts(): Node[][] {
    const s = this.s;
    const alts: Node[][] = [];
    let items: Node[] = [];
    let lastRepeat = -1;
    while (this.i < s.length) {
      const c = s[this.i]!;
      let repeatAt = -1;
      switch (c) {
        case "(":
          if (s[this.i + 1] === "?") {
            const g = this.parsePerlFlags();
            if (g) items.push(g);
          } else {
            this.names.push("");
            this.i++;
            items.push(this.parseGroup(true, this.flags));
          }
          break;
        case "|":
          alts.push(items);
          items = [];
          this.i++;
          break;
        case ")":
          if (this.depth === 0) throw this.err("unexpected )", s);
          alts.push(items);
          return alts;
        case "^":
          items.push(leaf(this.flags & ONE_LINE ? "^" : "(?<![^\\n])", false, null));
          this.i++;
          break;
        case "$":
          items.push(leaf(this.flags & ONE_LINE ? "$" : "(?![^\\n])", false, null));
          this.i++;
          break;
        case ".":
          items.push(leaf(this.flags & DOT_NL ? "[\\s\\S]" : "[^\\n]", true, null));
          this.i++;
          break;
        case "[":
          items.push(this.parseClass());
          break;
        case "*":
        case "+":
        case "?":
          repeatAt = this.i;
          this.repeat(items, c, 0, 0, this.i + 1, lastRepeat);
          break;
        case "{": {
          const r = this.parseRepeat(this.i);
          if (!r) {
            items.push(leaf(litSrc(0x7b), true, this.fold()));
            this.i++;
            break;
          }
          const [min, max, after] = r;
          if (min < 0 || min > 1000 || max > 1000 || (max >= 0 && min > max))
            throw this.err("invalid repeat count", s.slice(this.i, after));
          repeatAt = this.i;
          this.repeat(items, "{", min, max, after, lastRepeat);
          break;
        }
        case "\\":
          this.parseBackslash(items);
          break;
        default: {
          const cp = this.cpAt(this.i);
          items.push(leaf(litSrc(cp), true, this.fold()));
          this.i += cp > 0xffff ? 2 : 1;
        }
      }
      lastRepeat = repeatAt;
    }
    if (this.depth > 0) throw this.err("missing closing )", s);
    alts.push(items);
    return alts;
  }

  private fold(): boolean {
    return (this.flags & FOLD) !== 0;
  }

  private parseGroup(cap: boolean, saved: number): Node {
    if (++this.depth > 1000) throw this.err("expression nests too deeply", this.s);
    const alts = this.parseAlts();
    this.depth--;
    this.i++; // the `)`
    this.flags = saved;
    let prod = 1;
    for (const a of alts) for (const n of a) prod = Math.max(prod, prodOf(n));
    return { k: "group", cap, alts, prod };
  }

  /** `(?P<name>`, `(?<name>`, `(?flags)`, `(?flags:`; returns the group, or null for bare flags. */
  private parsePerlFlags(): Node | null {
    const s = this.s;
    const start = this.i;
    const t = s.slice(start);
    const withP = t.length > 4 && t[2] === "P" && t[3] === "<";
    const withName = t.length > 3 && t[2] === "<";
    if (withP || withName) {
      const end = t.indexOf(">");
      if (end < 0) throw this.err("invalid named capture", t);
      const name = t.slice(withP ? 4 : 3, end);
      if (!/^[A-Za-z0-9_]+$/.test(name)) throw this.err("invalid named capture", t.slice(0, end + 1));
      this.names.push(name);
      this.i = start + end + 1;
      return this.parseGroup(true, this.flags);
    }
    let p = start + 2;
    let flags = this.flags;
    let sign = 1;
    let sawFlag = false;
    while (p < s.length) {
      const c = s[p]!;
      p += this.width(p);
      switch (c) {
        case "i":
          flags |= FOLD;
          sawFlag = true;
          continue;
        case "m":
          flags &= ~ONE_LINE;
          sawFlag = true;
          continue;
        case "s":
          flags |= DOT_NL;
          sawFlag = true;
          continue;
        case "U":
          flags |= NON_GREEDY;
          sawFlag = true;
          continue;
        case "-":
          if (sign < 0) break;
          sign = -1;
          // Go inverts the flags so that the sets above become clears, and inverts back at the end.
          flags = ~flags;
          sawFlag = false;
          continue;
        case ":":
        case ")": {
          if (sign < 0) {
            if (!sawFlag) break;
            flags = ~flags;
          }
          const saved = this.flags;
          this.flags = flags;
          this.i = p;
          return c === ":" ? this.parseGroup(false, saved) : null;
        }
      }
      break;
    }
    throw this.err("invalid or unsupported Perl syntax", s.slice(start, p));
  }

  /** `{min}`, `{min,}`, `{min,max}` at `at`: [min, max (-1 open), index after `}`], or null. */
  private parseRepeat(at: number): [number, number, number] | null {
    const s = this.s;
    let p = at + 1;
    const int = (): number | null => {
      if (p >= s.length || s[p]! < "0" || s[p]! > "9") return null;
      if (s[p] === "0" && p + 1 < s.length && s[p + 1]! >= "0" && s[p + 1]! <= "9") return null;
      let n = 0;
      for (; p < s.length && s[p]! >= "0" && s[p]! <= "9"; p++) {
        if (n >= 1e8) n = -1;
        else if (n >= 0) n = n * 10 + (s.charCodeAt(p) - 0x30);
      }
      return n;
    };
    let min = int();
    if (min === null || p >= s.length) return null;
    let max: number;
    if (s[p] !== ",") max = min;
    else {
      p++;
      if (p >= s.length) return null;
      if (s[p] === "}") max = -1;
      else {
        const m = int();
        if (m === null) return null;
        max = m;
        if (max < 0) min = -1;
      }
    }
    if (p >= s.length || s[p] !== "}") return null;
    return [min, max, p + 1];
  }

  private repeat(
    items: Node[],
    op: string,
    min: number,
    max: number,
    after: number,
    lastRepeat: number,
  ): void {
    const before = this.i;
    let lazy = (this.flags & NON_GREEDY) !== 0;
    if (this.s[after] === "?") {
      after++;
      lazy = !lazy;
    }
    if (lastRepeat >= 0)
      throw this.err("invalid nested repetition operator", this.s.slice(lastRepeat, after));
    const sub = items[items.length - 1];
    if (!sub) throw this.err("missing argument to repetition operator", this.s.slice(before, after));
    let q: string;
    let prod = prodOf(sub);
    if (op === "{") {
      q = max === min ? `{${min}}` : max < 0 ? `{${min},}` : `{${min},${max}}`;
      const m = max < 0 ? min : max;
      prod = m === 0 ? 1 : m * prod;
      // Go's repeatIsValid: nested counted repetitions may not exceed 1000 copies.
      if ((min >= 2 || max >= 2) && prod > 1000)
        throw this.err("invalid repeat count", this.s.slice(before, after));
    } else q = op;
    items[items.length - 1] = { k: "rep", sub, q: lazy ? q + "?" : q, prod };
    this.i = after;
  }

  private parseBackslash(items: Node[]): void {
    const s = this.s;
    const at = this.i;
    if (at + 1 < s.length) {
      switch (s[at + 1]) {
        case "A":
          items.push(leaf("^", false, null));
          this.i += 2;
          return;
        case "z":
          items.push(leaf("$", false, null));
          this.i += 2;
          return;
        case "b":
          items.push(leaf("\\b", false, false));
          this.i += 2;
          return;
        case "B":
          items.push(leaf("\\B", false, false));
          this.i += 2;
          return;
        case "C":
          throw this.err("invalid escape sequence", "\\C");
        case "Q": {
          const end = s.indexOf("\\E", at + 2);
          const lit = end < 0 ? s.slice(at + 2) : s.slice(at + 2, end);
          for (const ch of lit) items.push(leaf(litSrc(ch.codePointAt(0)!), true, this.fold()));
          this.i = end < 0 ? s.length : end + 2;
          return;
        }
      }
    }
    const atoms: string[] = [];
    if (this.unicodeClass(atoms) || this.perlClass(atoms)) {
      items.push(classLeaf(atoms, false, this.fold()));
      return;
    }
    const cp = this.parseEscape();
    items.push(leaf(litSrc(cp), true, this.fold()));
  }

  /** `\pN`, `\p{Name}`, `\P…` at `this.i`; appends atoms and returns true, or false if absent. */
  private unicodeClass(atoms: string[]): boolean {
    const s = this.s;
    const at = this.i;
    if (s[at] !== "\\" || (s[at + 1] !== "p" && s[at + 1] !== "P")) return false;
    let sign = s[at + 1] === "P" ? -1 : 1;
    let name: string;
    let seqEnd: number;
    if (s[at + 2] !== "{") {
      seqEnd = at + 2 < s.length ? at + 2 + this.width(at + 2) : at + 2;
      name = s.slice(at + 2, seqEnd);
    } else {
      const end = s.indexOf("}", at);
      if (end < 0) throw this.err("invalid character class range", s.slice(at));
      seqEnd = end + 1;
      name = s.slice(at + 3, end);
    }
    if (name[0] === "^") {
      sign = -sign;
      name = name.slice(1);
    }
    const cls = name ? unicodeClass(name) : undefined;
    if (!cls) throw this.err("invalid character class range", s.slice(at, seqEnd));
    for (const a of sign > 0 ? cls.pos : cls.neg) atoms.push(a);
    this.i = seqEnd;
    return true;
  }

  /** `\d \D \s \S \w \W` at `this.i`. */
  private perlClass(atoms: string[]): boolean {
    const s = this.s;
    if (s[this.i] !== "\\") return false;
    const c = s[this.i + 1];
    const set = c ? PERL[c.toLowerCase()] : undefined;
    if (!set) return false;
    this.group(set, c === c!.toUpperCase(), atoms);
    this.i += 2;
    return true;
  }

  private group(set: Ranges, negated: boolean, atoms: string[]): void {
    if (!negated) rangeAtoms(set, atoms);
    else rangeAtoms(complement(this.fold() ? foldClosure(set) : set), atoms);
  }

  /** Go's parseEscape at `this.i` (a backslash): the escaped code point. */
  private parseEscape(): number {
    const s = this.s;
    const at = this.i;
    let p = at + 1;
    if (p >= s.length) throw this.err("trailing backslash at end of expression", "");
    const c = this.cpAt(p);
    p += c > 0xffff ? 2 : 1;
    const done = (cp: number) => {
      this.i = p;
      return cp;
    };
    // Octal: \0 and up to two more digits; \1–\7 only when another octal digit follows (a single
    // non-zero digit would be a back-reference, which Go does not support).
    if (c === 0x30 || (c >= 0x31 && c <= 0x37 && p < s.length && isOctal(s.charCodeAt(p)))) {
      let r = c - 0x30;
      for (let k = 1; k < 3 && p < s.length && isOctal(s.charCodeAt(p)); k++, p++)
        r = r * 8 + s.charCodeAt(p) - 0x30;
      return done(r);
    }
    escape: switch (c) {
      case 0x78: {
        // \x
        if (p >= s.length) break;
        const d = this.cpAt(p);
        p += d > 0xffff ? 2 : 1;
        if (d === 0x7b) {
          let r = 0;
          let nhex = 0;
          for (;;) {
            if (p >= s.length) break escape;
            const h = this.cpAt(p);
            p += h > 0xffff ? 2 : 1;
            if (h === 0x7d) break;
            const v = unhex(h);
            if (v < 0) break escape;
            r = r * 16 + v;
            if (r > MAX_RUNE) break escape;
            nhex++;
          }
          if (nhex === 0) break;
          return done(r);
        }
        const x = unhex(d);
        let y = -1;
        if (p < s.length) {
          const e = this.cpAt(p);
          p += e > 0xffff ? 2 : 1;
          y = unhex(e);
        }
        if (x < 0 || y < 0) break;
        return done(x * 16 + y);
      }
      case 0x61:
        return done(0x07);
      case 0x66:
        return done(0x0c);
      case 0x6e:
        return done(0x0a);
      case 0x72:
        return done(0x0d);
      case 0x74:
        return done(0x09);
      case 0x76:
        return done(0x0b);
      default:
        if (c < 0x80 && !isAlnum(c)) return done(c);
    }
    throw this.err("invalid escape sequence", s.slice(at, p));
  }

  private parseClass(): Node {
    const s = this.s;
    const whole = s.slice(this.i);
    const fold = this.fold();
    this.i++;
    let negated = false;
    if (s[this.i] === "^") {
      negated = true;
      this.i++;
    }
    const atoms: string[] = [];
    let first = true;
    while (this.i >= s.length || s[this.i] !== "]" || first) {
      first = false;
      if (s.length - this.i > 2 && s[this.i] === "[" && s[this.i + 1] === ":") {
        const end = s.indexOf(":]", this.i + 2);
        if (end >= 0) {
          const name = s.slice(this.i, end + 2);
          const neg = name[2] === "^";
          const key = name.slice(neg ? 3 : 2, -2);
          const set = Object.hasOwn(POSIX, key) ? POSIX[key] : undefined;
          if (!set) throw this.err("invalid character class range", name);
          this.group(set, neg, atoms);
          this.i = end + 2;
          continue;
        }
      }
      if (this.unicodeClass(atoms) || this.perlClass(atoms)) continue;
      const rangeAt = this.i;
      const lo = this.classChar(whole);
      let hi = lo;
      if (s[this.i] === "-" && this.i + 1 < s.length && s[this.i + 1] !== "]") {
        this.i++;
        hi = this.classChar(whole);
        if (hi < lo) throw this.err("invalid character class range", s.slice(rangeAt, this.i));
      }
      rangeAtoms([lo, hi], atoms);
    }
    this.i++;
    return classLeaf(atoms, negated, fold);
  }

  private classChar(whole: string): number {
    if (this.i >= this.s.length) throw this.err("missing closing ]", whole);
    if (this.s[this.i] === "\\") return this.parseEscape();
    const cp = this.cpAt(this.i);
    this.i += cp > 0xffff ? 2 : 1;
    return cp;
  }
}

export function translateGoRegex(pattern: string): GoTranslation {
  const p = new Parser(pattern);
  const alts = p.parseAlts();
  return { source: renderAlts(alts, false), names: p.names };
}
