/**
 * Executes a parsed Go template over floe values with Go's semantics: `%v` printing, `<no value>`
 * for a missing map key, truthiness, variables and scoping, range over arrays / maps (sorted keys)
 * / integers, and Go's error texts (`template: sink:1:2: executing "sink" at <.x>: …`).
 */
import { fmtV, goType, isObj, type Obj, type Value } from "../value/values.ts";
import { TemplateError, type Command, type Node, type Operand, type Pipeline, type Template } from "./parse.ts";
import { OUTPUTS_PER_LOOK, type Turn } from "../core/turn.ts";

/** A missing map key: prints `<no value>`, is nil everywhere else. */
export const NO_VALUE: unique symbol = Symbol("no value");
export type TValue = Value | typeof NO_VALUE;

export interface TemplateFunc {
  (args: Value[], ctx: FuncCtx): Value;
}

export interface FuncCtx {
  /** eKuiper `prop` lookups. */
  readonly props: Readonly<Record<string, string>>;
}

type ControlNode = Extract<Node, { pipe: Pipeline; list: Node[] }>;

class Break {}
class Continue {}
const BREAK = new Break();
const CONTINUE = new Continue();

/** A function error: Go wraps it as `error calling <name>: <msg>`. */
export class FuncError extends Error {}

export function lineCol(text: string, pos: number): string {
  const before = text.slice(0, pos);
  const nl = before.lastIndexOf("\n");
  const line = 1 + (before.match(/\n/g)?.length ?? 0);
  // Go's ErrorContext: the byte offset within the line (0-based).
  const col = nl < 0 ? Buffer.byteLength(before) : Buffer.byteLength(before.slice(nl + 1));
  return `${line}:${col}`;
}

function operandText(op: Operand): string {
  switch (op.k) {
    case "dot":
      return ".";
    case "field":
      return "." + op.names.join(".");
    case "var":
      return op.name + op.names.map((n) => "." + n).join("");
    case "ident":
      return op.name;
    case "chain":
      return operandText(op.node) + op.names.map((n) => "." + n).join("");
    case "pipe":
      return "(" + pipeText(op.pipe) + ")";
    case "string":
      return JSON.stringify(op.value);
    case "number":
      return op.text;
    case "bool":
      return String(op.value);
    case "nil":
      return "nil";
  }
}

function pipeText(p: Pipeline): string {
  const decl = p.decl.length ? p.decl.join(", ") + (p.assign ? " = " : " := ") : "";
  return decl + p.cmds.map((c) => c.args.map(operandText).join(" ")).join(" | ");
}

/** Go's typeName for error messages; a top-level array of rows is `[]map[string]interface {}`. */
function typeName(v: TValue): string {
  if (v === NO_VALUE) return "<nil>";
  if (Array.isArray(v) && v.length > 0 && v.every((x) => isObj(x))) return "[]map[string]interface {}";
  return goType(v);
}

export function truth(v: TValue): boolean {
  if (v === NO_VALUE || v === null) return false;
  switch (typeof v) {
    case "boolean":
      return v;
    case "string":
      return v.length > 0;
    case "number":
      return v !== 0;
    case "bigint":
      return v !== 0n;
  }
  if (Array.isArray(v)) return v.length > 0;
  if (v instanceof Uint8Array) return v.length > 0;
  if (isObj(v)) return Object.keys(v).length > 0;
  return true;
}

export function printValue(v: TValue): string {
  if (v === NO_VALUE) return "<no value>";
  if (v instanceof Uint8Array) return fmtV(v);
  return fmtV(v);
}

function plain(v: TValue): Value {
  return v === NO_VALUE ? null : v;
}

interface Var {
  name: string;
  value: TValue;
}

type Entries = [TValue, TValue][];

/** Range iterations run between two clock checks of a stepped run. */
const CHUNK = OUTPUTS_PER_LOOK;

export class Executor {
  private out = "";
  private vars: Var[] = [];
  // A stepped run (begin / step): the root's dot, the next root node, and the top-level range in progress.
  private dot: Value = null;
  private pc = 0;
  private entries: Entries | null = null;
  private next = 0;
  private mark = 0;
  constructor(
    private readonly tmpl: Template,
    private readonly funcs: ReadonlyMap<string, TemplateFunc>,
    private readonly ctx: FuncCtx,
  ) {}

  run(data: Value): string {
    this.out = "";
    this.vars = [{ name: "$", value: data }];
    this.list(data, this.tmpl.root);
    return this.out;
  }

  /**
   * Starts a stepped run over `data`: the same output as `run`, produced by `step` a few
   * iterations of the root's top-level ranges at a time (a sink's whole-window template).
   */
  begin(data: Value): void {
    this.out = "";
    this.vars = [{ name: "$", value: data }];
    this.dot = data;
    this.pc = 0;
    this.entries = null;
    this.next = 0;
  }

  /**
   * Runs on until the template is done (true; `output` is the text), the turn is spent or about
   * `cap` top-level range iterations ran (an unbounded turn: to the end). Throws TemplateError.
   */
  step(turn: Turn, cap: number): boolean {
    let done = 0;
    const root = this.tmpl.root;
    const dot = this.dot;
    while (this.pc < root.length) {
      const n = root[this.pc]!;
      if (n.k !== "range") {
        this.node(dot, n);
        this.pc++;
        continue;
      }
      let entries = this.entries;
      if (entries === null) {
        this.mark = this.vars.length;
        entries = this.rangeEntries(dot, n);
        if (entries === null) {
          this.vars.length = this.mark;
          this.pc++;
          continue;
        }
        this.entries = entries;
        this.next = 0;
      }
      let j = this.next;
      while (j >= 0 && j < entries.length) {
        j = this.iterate(n, entries, j, Math.min(entries.length, j + CHUNK));
        done += CHUNK;
        if (j >= 0 && j < entries.length && turn.over(done, cap)) {
          this.next = j;
          return false;
        }
      }
      this.vars.length = this.mark;
      this.entries = null;
      this.pc++;
    }
    return true;
  }

  /** The text of a stepped run once `step` returned true. */
  get output(): string {
    return this.out;
  }

  private fail(pos: number, context: string, msg: string): never {
    const t = this.tmpl;
    throw new TemplateError(`template: ${t.name}:${lineCol(t.text, pos)}: executing "${t.name}" at <${context}>: ${msg}`);
  }

  private list(dot: TValue, nodes: Node[]): void {
    for (const n of nodes) this.node(dot, n);
  }

  private node(dot: TValue, n: Node): void {
    switch (n.k) {
      case "text":
        this.out += n.text;
        return;
      case "action": {
        const v = this.pipeline(dot, n.pipe);
        if (n.pipe.decl.length === 0) this.out += printValue(v);
        return;
      }
      case "if":
      case "with": {
        const mark = this.vars.length;
        const v = this.pipeline(dot, n.pipe);
        if (truth(v)) this.list(n.k === "with" ? v : dot, n.list);
        else if (n.elseList) this.list(dot, n.elseList);
        this.vars.length = mark;
        return;
      }
      case "range":
        this.range(dot, n);
        return;
      case "break":
        throw BREAK;
      case "continue":
        throw CONTINUE;
    }
  }

  private range(dot: TValue, n: ControlNode): void {
    const mark = this.vars.length;
    const entries = this.rangeEntries(dot, n);
    if (entries !== null) this.iterate(n, entries, 0, entries.length);
    this.vars.length = mark;
  }

  /** What a range iterates over, as [key, element] pairs; null when there is none (its else branch ran). */
  private rangeEntries(dot: TValue, n: ControlNode): Entries | null {
    const p = n.pipe;
    // The range's own declarations bind per iteration, not to the pipeline's value.
    const v = this.pipeline(dot, { ...p, decl: [] });
    const entries: Entries = [];
    if (Array.isArray(v)) v.forEach((x, i) => entries.push([BigInt(i), x]));
    else if (v instanceof Uint8Array) v.forEach((x, i) => entries.push([BigInt(i), BigInt(x)]));
    else if (typeof v === "bigint") for (let i = 0n; i < v; i++) entries.push([i, i]);
    else if (v !== null && v !== NO_VALUE && isObj(v)) {
      for (const k of Object.keys(v).sort()) entries.push([k, v[k]!]);
    } else if (v !== null && v !== NO_VALUE) this.fail(n.pos, pipeText(p), `range can't iterate over ${printValue(v)}`);
    if (entries.length === 0) {
      if (n.elseList) this.list(dot, n.elseList);
      return null;
    }
    return entries;
  }

  /** Runs iterations [from, to) of range `n`; the index after the last one, or -1 after a `break`. */
  private iterate(n: ControlNode, entries: Entries, from: number, to: number): number {
    const p = n.pipe;
    for (let j = from; j < to; j++) {
      const [k, e] = entries[j]!;
      const inner = this.vars.length;
      if (p.decl.length === 1) this.setVar(p.decl[0]!, e, p.assign, n.pos);
      else if (p.decl.length === 2) {
        this.setVar(p.decl[0]!, k, p.assign, n.pos);
        this.setVar(p.decl[1]!, e, p.assign, n.pos);
      }
      try {
        this.list(e, n.list);
      } catch (x) {
        if (x === BREAK) {
          this.vars.length = inner;
          return -1;
        }
        if (x !== CONTINUE) throw x;
      }
      this.vars.length = inner;
    }
    return to;
  }

  private setVar(name: string, value: TValue, assign: boolean, pos: number): void {
    if (!assign) {
      this.vars.push({ name, value });
      return;
    }
    for (let i = this.vars.length - 1; i >= 0; i--) {
      if (this.vars[i]!.name === name) {
        this.vars[i]!.value = value;
        return;
      }
    }
    this.fail(pos, name, `undefined variable: ${name}`);
  }

  private varValue(name: string, pos: number): TValue {
    for (let i = this.vars.length - 1; i >= 0; i--) if (this.vars[i]!.name === name) return this.vars[i]!.value;
    return this.fail(pos, name, `undefined variable: ${name}`);
  }

  private pipeline(dot: TValue, p: Pipeline): TValue {
    let v: TValue | undefined;
    for (const c of p.cmds) v = this.command(dot, c, v);
    const value = v === undefined ? NO_VALUE : v;
    if (p.decl.length) this.setVar(p.decl[0]!, value, p.assign, p.pos);
    return value;
  }

  private command(dot: TValue, c: Command, final: TValue | undefined): TValue {
    const first = c.args[0]!;
    const rest = c.args.slice(1);
    switch (first.k) {
      case "ident":
        return this.call(dot, first, rest, final);
      case "field":
        return this.fieldChain(dot, dot, first.names, first, rest, final);
      case "chain": {
        const base = first.node.k === "ident" ? this.call(dot, first.node, [], undefined) : this.operand(dot, first.node);
        return this.fieldChain(dot, base, first.names, first, rest, final);
      }
      case "var":
        return this.fieldChain(dot, this.varValue(first.name, first.pos), first.names, first, rest, final);
    }
    if (rest.length || final !== undefined) this.fail(first.pos, operandText(first), `can't give argument to non-function ${operandText(first)}`);
    return this.operand(dot, first);
  }

  private fieldChain(dot: TValue, recv: TValue, names: string[], at: Operand, args: Operand[], final: TValue | undefined): TValue {
    if (names.length === 0) {
      if (args.length || final !== undefined) this.fail(at.pos, operandText(at), `can't give argument to non-function ${operandText(at)}`);
      return recv;
    }
    let v = recv;
    for (let i = 0; i < names.length; i++) {
      const name = names[i]!;
      if (i === names.length - 1 && (args.length || final !== undefined))
        this.fail(at.pos, operandText(at), `${name} has arguments but cannot be invoked as function`);
      if (v === NO_VALUE) return NO_VALUE;
      if (v === null) this.fail(at.pos, operandText(at), `nil pointer evaluating interface {}.${name}`);
      if (isObj(v)) {
        const x = v[name];
        v = x === undefined ? NO_VALUE : x;
        continue;
      }
      this.fail(at.pos, operandText(at), `can't evaluate field ${name} in type ${typeName(v)}`);
    }
    void dot;
    return v;
  }

  private operand(dot: TValue, op: Operand): TValue {
    switch (op.k) {
      case "dot":
        return dot;
      case "field":
        return this.fieldChain(dot, dot, op.names, op, [], undefined);
      case "var":
        return this.fieldChain(dot, this.varValue(op.name, op.pos), op.names, op, [], undefined);
      case "ident":
        return this.call(dot, op, [], undefined);
      case "chain": {
        const base = op.node.k === "ident" ? this.call(dot, op.node, [], undefined) : this.operand(dot, op.node);
        return this.fieldChain(dot, base, op.names, op, [], undefined);
      }
      case "pipe": {
        const mark = this.vars.length;
        const v = this.pipeline(dot, op.pipe);
        this.vars.length = mark;
        return v;
      }
      case "string":
        return op.value;
      case "number":
        return op.value;
      case "bool":
        return op.value;
      case "nil":
        return null;
    }
  }

  private call(dot: TValue, id: Extract<Operand, { k: "ident" }>, argOps: Operand[], final: TValue | undefined): TValue {
    const name = id.name;
    // and / or evaluate lazily and return an operand itself (Go 1.18+).
    if (name === "and" || name === "or") {
      const n = argOps.length + (final !== undefined ? 1 : 0);
      if (n === 0) this.fail(id.pos, name, `wrong number of args for ${name}: want at least 1 got 0`);
      let v: TValue = null;
      for (let i = 0; i < n; i++) {
        v = i < argOps.length ? this.operand(dot, argOps[i]!) : final!;
        if (name === "and" ? !truth(v) : truth(v)) return v;
      }
      return v;
    }
    const fn = this.funcs.get(name);
    if (!fn) this.fail(id.pos, name, `function "${name}" not defined`);
    const args: Value[] = argOps.map((a) => plain(this.operand(dot, a)));
    if (final !== undefined) args.push(plain(final));
    try {
      return fn(args, this.ctx);
    } catch (e) {
      if (e instanceof FuncError) this.fail(id.pos, name, `error calling ${name}: ${e.message}`);
      if (e instanceof TemplateError) throw e;
      if (e instanceof Error) this.fail(id.pos, name, `error calling ${name}: ${e.message}`);
      throw e;
    }
  }
}

export type { Obj };
