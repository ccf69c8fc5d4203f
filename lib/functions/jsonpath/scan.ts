/**
 * The subset of Go's `text/scanner` (mode GoTokens, comments skipped) that gval uses to tokenize
 * JSON paths. Positions follow the Go scanner exactly because they appear in parse errors:
 * `position` is where the last token started, `pos()` is just past the look-ahead character.
 */

export const EOF = -1;
export const IDENT = -2;
export const INT = -3;
export const FLOAT = -4;
export const CHAR = -5;
export const STRING = -6;
export const RAW_STRING = -7;

const TOKEN_NAMES: Record<number, string> = {
  [EOF]: "EOF",
  [IDENT]: "Ident",
  [INT]: "Int",
  [FLOAT]: "Float",
  [CHAR]: "Char",
  [STRING]: "String",
  [RAW_STRING]: "RawString",
};

/** Go `scanner.TokenString`: a class name, or the character quoted with `%q`. */
export function tokenString(tok: number): string {
  const n = TOKEN_NAMES[tok];
  if (n !== undefined) return n;
  return JSON.stringify(String.fromCodePoint(tok));
}

const LETTER = /\p{L}/u;
const DIGIT = /\p{Nd}/u;
const NOT_STARTED = -2;

function isIdentRune(ch: number, i: number): boolean {
  if (ch === 95) return true;
  if (ch < 0) return false;
  if (ch < 128) {
    return (ch >= 65 && ch <= 90) || (ch >= 97 && ch <= 122) || (i > 0 && ch >= 48 && ch <= 57);
  }
  const s = String.fromCodePoint(ch);
  return LETTER.test(s) || (i > 0 && DIGIT.test(s));
}

const isDecimal = (ch: number) => ch >= 48 && ch <= 57;
const isHex = (ch: number) =>
  isDecimal(ch) || (ch >= 97 && ch <= 102) || (ch >= 65 && ch <= 70);
const lower = (ch: number) => ch | 0x20;

export class GoScanner {
  private readonly src: number[];
  private srcPos = 0;
  private ch = NOT_STARTED;
  private line = 1;
  private column = 0;
  private lastLineLen = 0;
  private lastCharLen = 0;
  private tokPos = -1;
  private tokEnd = -1;
  /** Start of the last scanned token; line 0 = invalid. */
  tokLine = 0;
  tokColumn = 0;
  readonly filename: string;

  constructor(text: string) {
    this.src = Array.from(text, (c) => c.codePointAt(0)!);
    // gval names the "file" after the expression plus a TAB.
    this.filename = text + "\t";
  }

  private next(): number {
    if (this.srcPos >= this.src.length) {
      if (this.lastCharLen > 0) this.column++;
      this.lastCharLen = 0;
      return EOF;
    }
    const ch = this.src[this.srcPos++]!;
    this.lastCharLen = 1;
    this.column++;
    if (ch === 10) {
      this.line++;
      this.lastLineLen = this.column;
      this.column = 0;
    }
    return ch;
  }

  peek(): number {
    if (this.ch === NOT_STARTED) {
      this.ch = this.next();
      if (this.ch === 0xfeff) this.ch = this.next();
    }
    return this.ch;
  }

  /** Reads one character, invalidating the token position (Go `Scanner.Next`). */
  nextChar(): number {
    this.tokPos = -1;
    this.tokLine = 0;
    const ch = this.peek();
    if (ch !== EOF) this.ch = this.next();
    return ch;
  }

  scan(): number {
    let ch = this.peek();
    this.tokPos = -1;
    this.tokLine = 0;
    for (;;) {
      while (ch === 32 || ch === 9 || ch === 10 || ch === 13) ch = this.next();
      this.tokPos = this.srcPos - this.lastCharLen;
      if (this.column > 0) {
        this.tokLine = this.line;
        this.tokColumn = this.column;
      } else {
        this.tokLine = this.line - 1;
        this.tokColumn = this.lastLineLen;
      }
      let tok = ch;
      if (isIdentRune(ch, 0)) {
        tok = IDENT;
        ch = this.next();
        for (let i = 1; isIdentRune(ch, i); i++) ch = this.next();
      } else if (isDecimal(ch)) {
        [tok, ch] = this.scanNumber(ch, false);
      } else {
        switch (ch) {
          case EOF:
            break;
          case 34: // "
            this.scanString(34);
            tok = STRING;
            ch = this.next();
            break;
          case 46: // .
            ch = this.next();
            if (isDecimal(ch)) [tok, ch] = this.scanNumber(ch, true);
            break;
          case 47: // /
            ch = this.next();
            if (ch === 47 || ch === 42) {
              ch = this.skipComment(ch);
              continue;
            }
            break;
          case 39: // '
            this.scanString(39);
            tok = CHAR;
            ch = this.next();
            break;
          case 96: // `
            this.scanRaw();
            tok = RAW_STRING;
            ch = this.next();
            break;
          default:
            ch = this.next();
        }
      }
      this.tokEnd = this.srcPos - this.lastCharLen;
      this.ch = ch;
      return tok;
    }
  }

  tokenText(): string {
    if (this.tokPos < 0) return "";
    return String.fromCodePoint(...this.src.slice(this.tokPos, this.tokEnd));
  }

  /** Go `Position.String()` of the last token: `<file>:line:col`, or the file name alone. */
  positionString(): string {
    return this.tokLine > 0 ? `${this.filename}:${this.tokLine}:${this.tokColumn}` : this.filename;
  }

  /** Go `Scanner.Pos()`: line and column just past the last character read. */
  pos(): [number, number] {
    if (this.column > 0) return [this.line, this.column];
    if (this.lastLineLen > 0) return [this.line - 1, this.lastLineLen];
    return [1, 1];
  }

  private digits(ch: number, base: number): number {
    if (base <= 10) while (isDecimal(ch) || ch === 95) ch = this.next();
    else while (isHex(ch) || ch === 95) ch = this.next();
    return ch;
  }

  private scanNumber(ch: number, seenDot: boolean): [number, number] {
    let base = 10;
    let tok = INT;
    if (!seenDot) {
      if (ch === 48) {
        ch = this.next();
        const l = lower(ch);
        if (l === 120 || l === 111 || l === 98) {
          ch = this.next();
          base = l === 120 ? 16 : l === 111 ? 8 : 2;
        }
      }
      ch = this.digits(ch, base);
      if (ch === 46) {
        ch = this.next();
        seenDot = true;
      }
    }
    if (seenDot) {
      tok = FLOAT;
      ch = this.digits(ch, base);
    }
    const e = lower(ch);
    if (e === 101 || e === 112) {
      ch = this.next();
      tok = FLOAT;
      if (ch === 43 || ch === 45) ch = this.next();
      ch = this.digits(ch, 10);
    }
    return [tok, ch];
  }

  private scanString(quote: number): void {
    let ch = this.next();
    while (ch !== quote) {
      if (ch === 10 || ch < 0) return;
      if (ch === 92) {
        ch = this.next();
        if (ch === 10 || ch < 0) return;
      }
      ch = this.next();
    }
  }

  private scanRaw(): void {
    let ch = this.next();
    while (ch !== 96) {
      if (ch < 0) return;
      ch = this.next();
    }
  }

  private skipComment(ch: number): number {
    this.tokPos = -1;
    if (ch === 47) {
      ch = this.next();
      while (ch !== 10 && ch >= 0) ch = this.next();
      return ch;
    }
    ch = this.next();
    for (;;) {
      if (ch < 0) return ch;
      const ch0 = ch;
      ch = this.next();
      if (ch0 === 42 && ch === 47) return this.next();
    }
  }
}
