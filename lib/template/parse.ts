/**
 * Go text/template syntax (the subset of rules-and-sinks.md §3.2): text and actions, trim markers,
 * comments, pipelines with declarations, if / else if / range / with / break / continue. Parses
 * once into a tree that exec.ts walks; errors read like Go's: `template: sink:<line>: <message>`.
 * Size and nesting are bounded by the compile budget (a CompileBudgetError past them).
 */
import { beyondLimit, checkLimit, compileLimits } from "../value/compile-budget.ts";

export interface Pos {
  readonly pos: number;
}

export type Operand =
  | ({ k: "dot" } & Pos)
  | ({ k: "field"; names: string[] } & Pos)
  | ({ k: "var"; name: string; names: string[] } & Pos)
  | ({ k: "ident"; name: string } & Pos)
  | ({ k: "chain"; node: Operand; names: string[] } & Pos)
  | ({ k: "pipe"; pipe: Pipeline } & Pos)
  | ({ k: "string"; value: string } & Pos)
  | ({ k: "number"; value: bigint | number; text: string } & Pos)
  | ({ k: "bool"; value: boolean } & Pos)
  | ({ k: "nil" } & Pos);

export interface Command extends Pos {
  readonly args: Operand[];
}

export interface Pipeline extends Pos {
  readonly decl: string[];
  readonly assign: boolean;
  readonly cmds: Command[];
}

export type Node =
  | { k: "text"; text: string }
  | ({ k: "action"; pipe: Pipeline } & Pos)
  | ({ k: "if" | "with" | "range"; pipe: Pipeline; list: Node[]; elseList: Node[] | null } & Pos)
  | ({ k: "break" | "continue" } & Pos);

export interface Template {
  readonly name: string;
  readonly text: string;
  readonly root: Node[];
}

/** A template syntax or execution error; `message` is Go's full text. */
export class TemplateError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "TemplateError";
  }
}

type TokType = "dot" | "field" | "var" | "ident" | "string" | "number" | "char" | "(" | ")" | "|" | ":=" | "=" | ",";
interface Tok {
  t: TokType;
  v: string;
  pos: number;
  /** Whitespace precedes the token (a field right after an operand continues its chain). */
  sp: boolean;
}

type Item = { kind: "text"; text: string } | { kind: "action"; toks: Tok[]; pos: number };

const SPACE = new Set([" ", "\t", "\r", "\n"]);
const KEYWORDS = new Set(["if", "else", "end", "range", "with", "break", "continue", "define", "template", "block", "true", "false", "nil"]);

function lineOf(text: string, pos: number): number {
  let n = 1;
  for (let i = 0; i < pos && i < text.length; i++) if (text.charCodeAt(i) === 10) n++;
  return n;
}

/** Splits the template into text and action items (trim markers applied, comments removed). */
function lex(name: string, text: string): Item[] {
  const items: Item[] = [];
  let i = 0;
  let pendingTrim = false;
  const fail = (pos: number, msg: string): never => {
    throw new TemplateError(`template: ${name}:${lineOf(text, pos)}: ${msg}`);
  };
  while (i <= text.length) {
    const open = text.indexOf("{{", i);
    let chunk = open < 0 ? text.slice(i) : text.slice(i, open);
    if (pendingTrim) chunk = chunk.replace(/^[ \t\r\n]+/, "");
    pendingTrim = false;
    if (open < 0) {
      if (chunk) items.push({ kind: "text", text: chunk });
      break;
    }
    let p = open + 2;
    if (text[p] === "-" && SPACE.has(text[p + 1] ?? "")) {
      chunk = chunk.replace(/[ \t\r\n]+$/, "");
      p += 2;
    }
    if (chunk) items.push({ kind: "text", text: chunk });
    while (SPACE.has(text[p] ?? "")) p++;
    if (text.startsWith("/*", p)) {
      const end = text.indexOf("*/", p + 2);
      if (end < 0) fail(open, "unclosed comment");
      p = end + 2;
      while (SPACE.has(text[p] ?? "")) p++;
      if (text.startsWith("-}}", p) && SPACE.has(text[p - 1] ?? "")) {
        pendingTrim = true;
        i = p + 3;
      } else if (text.startsWith("}}", p)) i = p + 2;
      else fail(open, "comment ends before closing delimiter");
      continue;
    }
    const toks: Tok[] = [];
    let sp = true;
    for (;;) {
      if (p >= text.length) fail(open, "unclosed action");
      const c = text[p]!;
      if (SPACE.has(c)) {
        if (text[p + 1] === "-" && text.startsWith("}}", p + 2)) {
          pendingTrim = true;
          i = p + 4;
          break;
        }
        sp = true;
        p++;
        continue;
      }
      if (text.startsWith("}}", p)) {
        i = p + 2;
        break;
      }
      const start = p;
      let t: TokType;
      if (c === "(" || c === ")" || c === "|" || c === ",") {
        t = c;
        p++;
      } else if (c === ":" && text[p + 1] === "=") {
        t = ":=";
        p += 2;
      } else if (c === "=") {
        t = "=";
        p++;
      } else if (c === '"') {
        p++;
        while (p < text.length && text[p] !== '"') {
          if (text[p] === "\\") p++;
          if (text[p] === "\n") fail(start, "unterminated quoted string");
          p++;
        }
        if (p >= text.length) fail(start, "unterminated quoted string");
        p++;
        t = "string";
      } else if (c === "`") {
        const end = text.indexOf("`", p + 1);
        if (end < 0) fail(start, "unterminated raw quoted string");
        p = end + 1;
        t = "string";
      } else if (c === "'") {
        p++;
        while (p < text.length && text[p] !== "'") {
          if (text[p] === "\\") p++;
          p++;
        }
        p++;
        t = "char";
      } else if (c === "." && !/[0-9]/.test(text[p + 1] ?? "")) {
        p++;
        if (/[A-Za-z_]/.test(text[p] ?? "")) {
          while (/[A-Za-z0-9_]/.test(text[p] ?? "")) p++;
          t = "field";
        } else t = "dot";
      } else if (c === "$") {
        p++;
        while (/[A-Za-z0-9_]/.test(text[p] ?? "")) p++;
        t = "var";
      } else if (/[0-9+\-.]/.test(c)) {
        p++;
        while (/[0-9A-Za-z_.+\-]/.test(text[p] ?? "")) {
          if ((text[p] === "+" || text[p] === "-") && !/[eEpP]/.test(text[p - 1]!)) break;
          p++;
        }
        t = "number";
      } else if (/[A-Za-z_]/.test(c)) {
        while (/[A-Za-z0-9_]/.test(text[p] ?? "")) p++;
        t = "ident";
      } else {
        return fail(start, `unexpected ${JSON.stringify(c)} in command`);
      }
      toks.push({ t, v: text.slice(start, p), pos: start, sp });
      sp = false;
    }
    items.push({ kind: "action", toks, pos: open });
  }
  return items;
}

/** Go string literal → value (the escapes strconv.Unquote accepts). */
function unquote(s: string): string {
  if (s[0] === "`") return s.slice(1, -1);
  return JSON.parse(
    s.replace(/\\x([0-9a-fA-F]{2})/g, "\\u00$1").replace(/\\([abfv'])/g, (_, c: string) => ({ a: "\\u0007", b: "\\b", f: "\\f", v: "\\u000b", "'": "'" })[c]!),
  ) as string;
}

function parseNumber(s: string): bigint | number | undefined {
  const clean = s.replace(/_/g, "");
  if (/^[+-]?(0[xX][0-9a-fA-F]+|0[oO]?[0-7]+|0[bB][01]+|[1-9][0-9]*|0)$/.test(clean)) {
    const neg = clean[0] === "-";
    let body = clean.replace(/^[+-]/, "");
    if (/^0[0-7]+$/.test(body)) body = "0o" + body.slice(1);
    const v = BigInt(body);
    return neg ? -v : v;
  }
  if (/^[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?$/.test(clean)) return Number(clean);
  return undefined;
}

class Parser {
  private i = 0;
  /** Blocks and parentheses open around the current item (the compile budget's `templateDepth`). */
  private depth = 0;
  constructor(
    private readonly name: string,
    private readonly text: string,
    private readonly items: Item[],
  ) {}

  fail(pos: number, msg: string): never {
    throw new TemplateError(`template: ${this.name}:${lineOf(this.text, pos)}: ${msg}`);
  }

  /** Parses a list until one of `stops` (an `end`/`else` keyword); returns the stop seen. */
  list(stops: boolean): { nodes: Node[]; stop: Item & { kind: "action" } | undefined } {
    const nodes: Node[] = [];
    while (this.i < this.items.length) {
      const it = this.items[this.i++]!;
      if (it.kind === "text") {
        nodes.push({ k: "text", text: it.text });
        continue;
      }
      const first = it.toks[0];
      if (!first) this.fail(it.pos, "missing value for command");
      if (first.t === "ident" && (first.v === "end" || first.v === "else")) {
        if (!stops) this.fail(it.pos, `unexpected {{${first.v}}}`);
        return { nodes, stop: it };
      }
      nodes.push(this.action(it));
    }
    if (stops) this.fail(this.text.length, "unexpected EOF");
    return { nodes, stop: undefined };
  }

  private action(it: Item & { kind: "action" }): Node {
    const first = it.toks[0]!;
    if (first.t === "ident") {
      switch (first.v) {
        case "if":
        case "with":
        case "range":
          return this.control(first.v, it, it.toks.slice(1));
        case "break":
        case "continue":
          if (it.toks.length > 1) this.fail(it.pos, `unexpected ${it.toks[1]!.v} in {{${first.v}}}`);
          return { k: first.v, pos: first.pos };
        case "define":
        case "template":
        case "block":
          this.fail(it.pos, `{{${first.v}}} is not supported in a sink template`);
      }
    }
    return { k: "action", pos: first.pos, pipe: this.pipeline(it.toks, it.pos, false) };
  }

  /** Runs `parse` one level deeper; past the compile budget's nesting limit, a CompileBudgetError. */
  private nested<T>(parse: () => T): T {
    if (++this.depth > compileLimits().templateDepth) throw beyondLimit("templateDepth", `template ${this.name} nests too deeply`, "levels of blocks and parentheses");
    try {
      return parse();
    } finally {
      this.depth--;
    }
  }

  private control(kind: "if" | "with" | "range", it: Item & { kind: "action" }, toks: Tok[]): Node {
    return this.nested(() => this.controlBody(kind, it, toks));
  }

  private controlBody(kind: "if" | "with" | "range", it: Item & { kind: "action" }, toks: Tok[]): Node {
    const pipe = this.pipeline(toks, it.pos, kind === "range");
    if (pipe.cmds.length === 0) this.fail(it.pos, `missing value for ${kind}`);
    const body = this.list(true);
    let elseList: Node[] | null = null;
    const stop = body.stop!;
    if (stop.toks[0]!.v === "else") {
      const rest = stop.toks.slice(1);
      if (rest.length && rest[0]!.t === "ident" && (rest[0]!.v === "if" || rest[0]!.v === "with") && kind !== "range") {
        // `else if` / `else with`: an else branch holding one nested control that shares our {{end}}.
        elseList = [this.control(rest[0]!.v as "if" | "with", stop, rest.slice(1))];
        return { k: kind, pos: toks[0]?.pos ?? it.pos, pipe, list: body.nodes, elseList };
      }
      if (rest.length) this.fail(stop.pos, `unexpected ${rest[0]!.v} in else`);
      const e = this.list(true);
      if (e.stop!.toks[0]!.v !== "end") this.fail(e.stop!.pos, "expected end; found {{else}}");
      elseList = e.nodes;
    } else if (stop.toks.length > 1) this.fail(stop.pos, `unexpected ${stop.toks[1]!.v} in end`);
    return { k: kind, pos: toks[0]?.pos ?? it.pos, pipe, list: body.nodes, elseList };
  }

  private pipeline(toks: Tok[], pos: number, range: boolean): Pipeline {
    let j = 0;
    const decl: string[] = [];
    let assign = false;
    // Declarations: `$x :=`, `$x =`, and in range `$i, $e :=`.
    if (toks[0]?.t === "var") {
      if (toks[1]?.t === ":=" || toks[1]?.t === "=") {
        decl.push(toks[0].v);
        assign = toks[1].t === "=";
        j = 2;
      } else if (range && toks[1]?.t === "," && toks[2]?.t === "var" && (toks[3]?.t === ":=" || toks[3]?.t === "=")) {
        decl.push(toks[0].v, toks[2].v);
        assign = toks[3].t === "=";
        j = 4;
      }
    }
    const r = this.cmds(toks, j, pos);
    if (r.end !== toks.length) this.fail(toks[r.end]!.pos, `unexpected ${JSON.stringify(toks[r.end]!.v)} in operand`);
    if (decl.length && r.cmds.length === 0) this.fail(pos, "missing value for command");
    return { pos: toks[0]?.pos ?? pos, decl, assign, cmds: r.cmds };
  }

  /** Commands separated by `|` until `)` or the end; returns the index where it stopped. */
  private cmds(toks: Tok[], j: number, pos: number): { cmds: Command[]; end: number } {
    const cmds: Command[] = [];
    for (;;) {
      const args: Operand[] = [];
      const cpos = toks[j]?.pos ?? pos;
      while (j < toks.length && toks[j]!.t !== "|" && toks[j]!.t !== ")") {
        const r = this.operand(toks, j);
        args.push(r.op);
        j = r.end;
      }
      if (args.length === 0) {
        if (j < toks.length && toks[j]!.t === "|") this.fail(toks[j]!.pos, "missing value for command");
        if (cmds.length) this.fail(cpos, "missing value for command");
        return { cmds, end: j };
      }
      cmds.push({ pos: cpos, args });
      if (j < toks.length && toks[j]!.t === "|") {
        j++;
        if (j >= toks.length || toks[j]!.t === ")") this.fail(toks[j - 1]!.pos, "missing value for command");
        continue;
      }
      return { cmds, end: j };
    }
  }

  private operand(toks: Tok[], j: number): { op: Operand; end: number } {
    const t = toks[j]!;
    let op: Operand;
    let end = j + 1;
    switch (t.t) {
      case "dot":
        op = { k: "dot", pos: t.pos };
        break;
      case "field":
        op = { k: "field", pos: t.pos, names: [t.v.slice(1)] };
        break;
      case "var":
        op = { k: "var", pos: t.pos, name: t.v, names: [] };
        break;
      case "string":
        op = { k: "string", pos: t.pos, value: unquote(t.v) };
        break;
      case "char": {
        const ch = unquote('"' + t.v.slice(1, -1).replace(/"/g, '\\"') + '"');
        op = { k: "number", pos: t.pos, value: BigInt(ch.codePointAt(0) ?? 0), text: t.v };
        break;
      }
      case "number": {
        const v = parseNumber(t.v);
        if (v === undefined) this.fail(t.pos, `bad number syntax: ${JSON.stringify(t.v)}`);
        op = { k: "number", pos: t.pos, value: v, text: t.v };
        break;
      }
      case "ident":
        if (t.v === "true" || t.v === "false") op = { k: "bool", pos: t.pos, value: t.v === "true" };
        else if (t.v === "nil") op = { k: "nil", pos: t.pos };
        else if (KEYWORDS.has(t.v)) this.fail(t.pos, `unexpected <${t.v}> in command`);
        else op = { k: "ident", pos: t.pos, name: t.v };
        break;
      case "(": {
        const r = this.nested(() => this.cmds(toks, j + 1, t.pos));
        if (toks[r.end]?.t !== ")") this.fail(t.pos, "unclosed left paren");
        if (r.cmds.length === 0) this.fail(t.pos, "missing value for parenthesized pipeline");
        op = { k: "pipe", pos: t.pos, pipe: { pos: t.pos, decl: [], assign: false, cmds: r.cmds } };
        end = r.end + 1;
        break;
      }
      default:
        this.fail(t.pos, `unexpected ${JSON.stringify(t.v)} in operand`);
    }
    // A field immediately after an operand (no space) continues its chain: `$x.a`, `(f).a`.
    const chain: string[] = [];
    while (end < toks.length && toks[end]!.t === "field" && !toks[end]!.sp) chain.push(toks[end++]!.v.slice(1));
    if (chain.length) {
      if (op.k === "field" || op.k === "var") op.names.push(...chain);
      else if (op.k === "dot") op = { k: "field", pos: op.pos, names: chain };
      else if (op.k === "pipe" || op.k === "ident") op = { k: "chain", pos: op.pos, node: op, names: chain };
      else this.fail(op.pos, `unexpected . after term ${JSON.stringify(toks[j]!.v)}`);
    }
    return { op, end };
  }
}

/** Parses template `text` named `name` (eKuiper names sink templates `sink`). */
export function parseTemplate(text: string, name = "sink"): Template {
  if (text.length * 3 > compileLimits().templateBytes) checkLimit("templateBytes", Buffer.byteLength(text), `template ${name}`, "bytes");
  const items = lex(name, text);
  const p = new Parser(name, text, items);
  const { nodes } = p.list(false);
  return { name, text, root: nodes };
}
