/**
 * The gval parser driving PaesslerAG/jsonpath v0.1.1 (functions.md §9.2), ported closely enough
 * that parse errors read the same: gval scans with "camouflage" (a token handed back to the next
 * `scan()` together with the error to report if nobody consumes it), and an unparseable path
 * fails with `parsing error: <path>⇥:<line>:<col> - <line>:<col> <reason>`.
 */
import { RowError } from "../../errors.ts";
import { fmtV, isObj, parseGoFloat, type Obj, type Value } from "../../value/values.ts";
import { setMember } from "../key-order.ts";
import {
  EOF,
  CHAR,
  FLOAT,
  GoScanner,
  IDENT,
  INT,
  RAW_STRING,
  STRING,
  tokenString,
} from "./scan.ts";
import {
  INFIX,
  OPERATOR_NAMES,
  TERNARY_PREC,
  constant,
  evalString,
  isZero,
  prefixOp,
  type Builder,
  type Ev,
} from "./ops.ts";
import { parseCurrentPath, parseRootPath } from "./grammar.ts";
import { goUnquote } from "./unquote.ts";

const C = (s: string) => s.codePointAt(0)!;
const DOT = C(".");
const LBRACK = C("[");
const RBRACK = C("]");
const LPAREN = C("(");
const RPAREN = C(")");
const COLON = C(":");
const COMMA = C(",");
const LBRACE = C("{");
const RBRACE = C("}");

const SYMBOLS = new Set<number>();
for (const op of OPERATOR_NAMES) if (!/^[a-z]/.test(op)) for (const ch of op) SYMBOLS.add(C(ch));

function isOperatorPrefix(op: string): boolean {
  for (const name of OPERATOR_NAMES) if (name.startsWith(op)) return true;
  return false;
}

/** A parsed operand and the binary operator that follows it (none at the end). */
interface Stage {
  ev: Ev;
  build?: Builder;
  prec: number;
}

function fold(ev: Ev): Ev {
  return constant(ev(null, null));
}

/** gval `stageStack.push`: reduce while the stacked operator binds at least as tightly. */
function push(stack: Stage[], b: Stage): void {
  while (stack.length > 0 && stack[stack.length - 1]!.prec >= b.prec) {
    const a = stack.pop()!;
    const ev = a.build!(a.ev, b.ev);
    b.ev = a.ev.isConst && b.ev.isConst ? fold(ev) : ev;
  }
  stack.push(b);
}

function variable(keys: Ev[]): Ev {
  return (cur, root) => {
    const names = keys.map((k) => evalString(k, cur, root));
    let v: Value = root;
    for (let i = 0; i < names.length; i++) {
      const k = names[i]!;
      if (isObj(v) && Object.hasOwn(v, k)) {
        v = v[k]!;
        continue;
      }
      if (Array.isArray(v) && /^[+-]?\d+$/.test(k) && Number(k) >= 0 && Number(k) < v.length) {
        v = v[Number(k)]!;
        continue;
      }
      throw new RowError(`unknown parameter ${names.slice(0, i + 1).join(".")}`);
    }
    return v;
  };
}

/** gval's parser: operands via prefix extensions, binary operators by precedence. */
export class GvalParser {
  readonly sc: GoScanner;
  lastScan = 0;
  /** The pending "unexpected token" error of a camouflaged token. */
  camouflage: string | undefined;

  constructor(text: string) {
    this.sc = new GoScanner(text);
  }

  scan(): number {
    if (this.camouflage !== undefined) {
      this.camouflage = undefined;
      return this.lastScan;
    }
    this.lastScan = this.sc.scan();
    return this.lastScan;
  }

  private message(unit: string, expected: number[]): string {
    let exp = "";
    for (let i = 0; i < expected.length; i++) {
      exp += i === 0 ? " expected " : i === expected.length - 1 ? " or " : ", ";
      exp += tokenString(expected[i]!);
    }
    return `unexpected ${tokenString(this.lastScan)} while scanning ${unit}${exp}`;
  }

  expected(unit: string, ...expected: number[]): RowError {
    return new RowError(this.message(unit, expected));
  }

  camo(unit: string, ...expected: number[]): void {
    this.camouflage = this.message(unit, expected);
  }

  parseExpression(): Ev {
    const stack: Stage[] = [];
    for (;;) {
      push(stack, this.parseOperator(stack, this.parseNextExpression()));
      if (stack[stack.length - 1]!.build === undefined) return stack.pop()!.ev;
    }
  }

  private parseOperator(stack: Stage[], ev: Ev): Stage {
    for (;;) {
      const scan = this.scan();
      let op = this.sc.tokenText();
      let mustOp = false;
      if (SYMBOLS.has(scan)) {
        let next = this.sc.peek();
        while (SYMBOLS.has(next) && isOperatorPrefix(op + String.fromCodePoint(next))) {
          mustOp = true;
          op += String.fromCodePoint(next);
          this.sc.nextChar();
          next = this.sc.peek();
        }
      } else if (scan !== IDENT) {
        this.camo("operator");
        return { ev, prec: 0 };
      }
      const infix = INFIX.get(op);
      if (infix) return { ev, build: infix.build, prec: infix.prec };
      if (op === "?") {
        push(stack, { ev, prec: TERNARY_PREC });
        ev = this.parseIf(stack.pop()!.ev);
        continue;
      }
      if (!mustOp) {
        this.camo("operator");
        return { ev, prec: 0 };
      }
      throw new RowError(`unknown operator ${op}`);
    }
  }

  private parseIf(cond: Ev): Ev {
    const a = this.parseExpression();
    let b = constant(null);
    const s = this.scan();
    if (s === COLON) b = this.parseExpression();
    else if (s !== EOF) throw this.expected("<> ? <> : <>", COLON, EOF);
    return (cur, root) => (isZero(cond(cur, root)) ? b(cur, root) : a(cur, root));
  }

  private parseNextExpression(): Ev {
    const scan = this.scan();
    switch (scan) {
      case INT:
      case FLOAT: {
        const t = this.sc.tokenText();
        const f = parseGoFloat(t);
        if (f === undefined) throw new RowError(`strconv.ParseFloat: parsing "${t}": invalid syntax`);
        return constant(f);
      }
      case STRING:
      case CHAR:
      case RAW_STRING: {
        const s = goUnquote(this.sc.tokenText());
        if (s === undefined) throw new RowError("could not parse string: invalid syntax");
        return constant(s);
      }
      case LPAREN: {
        const ev = this.parseExpression();
        if (this.scan() !== RPAREN) throw this.expected("parentheses", RPAREN);
        return ev;
      }
      case LBRACK:
        return this.parseJsonArray();
      case LBRACE:
        return this.parseJsonObject();
      case 36: // $
        return parseRootPath(this);
      case 64: // @
        return parseCurrentPath(this);
      case 45: // -
      case 33: // !
      case 126: { // ~
        const operand = this.parseNextExpression();
        const ev: Ev = (cur, root) => prefixOp(scan, operand(cur, root));
        return operand.isConst ? fold(ev) : ev;
      }
      case IDENT:
        return this.parseIdent();
    }
    throw this.expected("extensions");
  }

  private parseJsonArray(): Ev {
    const evals: Ev[] = [];
    for (;;) {
      const s = this.scan();
      if (s === COMMA) continue;
      if (s === RBRACK) break;
      this.camo("array", COMMA, RBRACK);
      evals.push(this.parseExpression());
    }
    return (cur, root) => evals.map((e) => e(cur, root));
  }

  private parseJsonObject(): Ev {
    const entries: [Ev, Ev][] = [];
    for (;;) {
      const s = this.scan();
      if (s === COMMA) continue;
      if (s === RBRACE) break;
      this.camo("object", COMMA, RBRACE);
      const key = this.parseExpression();
      // gval consumes the next token here and ignores a missing ':'.
      this.scan();
      entries.push([key, this.parseExpression()]);
    }
    return (cur, root) => {
      const o: Obj = {};
      for (const [k, v] of entries) {
        const value = v(cur, root);
        setMember(o, fmtV(k(cur, root)), value);
      }
      return o;
    };
  }

  private parseIdent(): Ev {
    let token = this.sc.tokenText();
    if (token === "true") return constant(true);
    if (token === "false") return constant(false);
    let fullname = token;
    const keys: Ev[] = [constant(token)];
    for (;;) {
      const s = this.scan();
      if (s === DOT) {
        if (this.scan() !== IDENT) throw this.expected("field", IDENT);
        token = this.sc.tokenText();
        keys.push(constant(token));
      } else if (s === LPAREN) {
        this.parseArguments();
        const name = fullname;
        return () => {
          throw new RowError(`could not call function: unknown parameter ${name}`);
        };
      } else if (s === LBRACK) {
        const key = this.parseExpression();
        if (this.scan() !== RBRACK) throw this.expected("array key", RBRACK);
        keys.push(key);
      } else {
        this.camo("variable", DOT, LPAREN, LBRACK);
        return variable(keys);
      }
      fullname += token;
    }
  }

  private parseArguments(): void {
    if (this.scan() === RPAREN) return;
    this.camo("scan arguments", RPAREN);
    for (;;) {
      this.parseExpression();
      const s = this.scan();
      if (s === RPAREN) return;
      if (s !== COMMA) throw this.expected("arguments", RPAREN, COMMA);
    }
  }
}

/** Compiles a JSON path (or any gval expression); throws RowError `parsing error: …`. */
export function compileJsonPath(text: string): Ev {
  const p = new GvalParser(text);
  let reason: string;
  try {
    const ev = p.parseExpression();
    if (p.camouflage === undefined || p.lastScan === EOF) return ev;
    reason = p.camouflage;
  } catch (e) {
    if (!(e instanceof RowError)) throw e;
    reason = e.message;
  }
  const [line, col] = p.sc.pos();
  throw new RowError(`parsing error: ${p.sc.positionString()} - ${line}:${col} ${reason}`);
}
