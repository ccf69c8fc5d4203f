/**
 * The function registry: every built-in by lower-case name, with its kind, its parse-time
 * validator (which looks only at argument syntax) and its body. Category files call
 * `register(...)` when loaded; `index.ts` loads them all once and makes registries. The built-ins are
 * fixed once loaded; a `FunctionRegistry` (what the parser, planner and compiler consult) adds
 * the plugin functions (JavaScript UDFs) of its owner: the daemon's engine, or one pipe run.
 */
import type { Expr } from "../sql/ast.ts";
import type { FunctionSignatures } from "../sql/function-signatures.ts";
import type { Value } from "../value/values.ts";
import type { Zone } from "../value/time.ts";

export type FuncKind =
  | "scalar"
  | "aggregate"
  | "analytic"
  | "srf"
  | "multi"
  | "window"
  /** compiled by the expression compiler itself (meta, mqtt, window_start, ...). */
  | "special";

/** What a function may touch: the engine clock and settings, injected (no global clock, no I/O). */
export interface FuncEnv {
  /** Current epoch milliseconds of the engine clock (virtual in replay). */
  now(): number;
  /** The configured zone (`basic.timezone`). */
  readonly zone: Zone;
  readonly ruleId: string;
  /** Epoch ms when the rule's current run started. */
  readonly ruleStart: number;
}

/** One per call site; `state` belongs to that call site (compress, analytic functions, ...). */
export interface CallCtx {
  readonly name: string;
  readonly env: FuncEnv;
  state: unknown;
}

/**
 * A function body. Arguments are already evaluated and the null policy applied. Failures throw
 * RowError (prefixed `call func <name> error: ` by the call site) or ErrorValue (not prefixed).
 */
export type Exec = (args: Value[], ctx: CallCtx) => Value;

/** Null / empty-argument policy applied before the body (functions.md §0.2). */
export type NullPolicy = "N" | "F" | "Z";

/** Returns the validator message, or undefined when the arguments are acceptable. */
export type Validator = (args: Expr[]) => string | undefined;

export interface FuncDef {
  readonly name: string;
  readonly kind: FuncKind;
  readonly validate?: Validator;
  readonly policy?: NullPolicy;
  /**
   * Scalar/srf/multi: the body. Aggregate: called with one array per argument holding that
   * argument's per-row values for the group (functions §0.5). Analytic: see `analytic`.
   */
  readonly exec?: Exec;
  /** Analytic functions: per call site and partition state, and the per-row step. */
  readonly analytic?: {
    init(): unknown;
    step(args: Value[], valid: boolean, state: unknown, ctx: CallCtx): Value;
  };
  /** Aggregates computable incrementally (windows §9). */
  readonly incremental?: boolean;
  /**
   * Incremental aggregates: a fresh per-group accumulator. Feeding it the rows of a group in
   * order yields exactly what `exec` returns over the same rows, errors included.
   */
  readonly accumulator?: () => Accumulator;
  /**
   * Incremental aggregates that can keep many groups' state in arrays by group slot (an
   * incremental window's groups; agg-fold.ts): what `accumulator` gives, slot by slot.
   */
  readonly column?: () => AccColumn;
  /** Set for functions registered at run time by a plugin (JavaScript UDFs): the plugin kind. */
  readonly plugin?: string;
}

/** One group's running aggregate; `add` gets this row's argument values (one per argument). */
export interface Accumulator {
  add(args: Value[]): void;
  /** The aggregate so far; throws the (unprefixed) RowError the buffered `exec` would throw. */
  value(): Value;
  /** The running state as plain data (checkpoints, rules-and-sinks.md §5); values stay Values. */
  snapshot(): unknown;
  /** Loads a `snapshot()` into a fresh accumulator of the same aggregate. */
  restore(s: unknown): void;
  /**
   * Starts over as a fresh accumulator (a window's group reused for the next window). A value
   * returned before is left as it was: state it shares is replaced, not cleared.
   */
  reset(): void;
}

/**
 * The running aggregates of many groups, one slot per group (windows §9: an incremental window's
 * groups by their slot). Slot i behaves as an Accumulator of its own: what it is fed, it yields,
 * and its `snapshot` is that accumulator's.
 */
export interface AccColumn {
  /** Starts slot `i` over as a fresh accumulator; a new slot is at most one past the last. */
  reset(i: number): void;
  add(i: number, args: Value[]): void;
  /** Slot `i`'s aggregate so far; throws as Accumulator.value does. */
  value(i: number): Value;
  snapshot(i: number): unknown;
  /** Loads a snapshot into slot `i` (already reset). */
  restore(i: number, s: unknown): void;
  /** Slot `i` takes over slot `from` of `src`, a column of the same aggregate (compaction). */
  take(i: number, src: AccColumn, from: number): void;
}

/** The column of an aggregate without arrays of its own: one accumulator object per slot. */
export class ObjectColumn implements AccColumn {
  private readonly accs: (Accumulator | undefined)[] = [];
  constructor(private readonly make: () => Accumulator) {}
  reset(i: number): void {
    const a = this.accs[i];
    if (a === undefined) this.accs[i] = this.make();
    else a.reset();
  }
  add(i: number, args: Value[]): void {
    this.accs[i]!.add(args);
  }
  value(i: number): Value {
    return this.accs[i]!.value();
  }
  snapshot(i: number): unknown {
    return this.accs[i]!.snapshot();
  }
  restore(i: number, s: unknown): void {
    this.accs[i]!.restore(s);
  }
  take(i: number, src: AccColumn, from: number): void {
    const other = (src as ObjectColumn).accs;
    this.accs[i] = other[from]!;
    // The accumulator is this slot's now: the source slot gets a fresh one if it is reset again.
    other[from] = undefined;
  }
}

const builtins = new Map<string, FuncDef>();

/** Adds built-in definitions; a name registered twice is a programming error. */
export function register(...defs: FuncDef[]): void {
  for (const d of defs) {
    if (builtins.has(d.name)) throw new Error(`function ${d.name} registered twice`);
    builtins.set(d.name, d);
  }
}

/** Registers `alias` as another name of the built-in `target`. */
export function alias(aliasName: string, target: string): void {
  const d = builtins.get(target);
  if (!d) throw new Error(`alias ${aliasName}: unknown function ${target}`);
  register({ ...d, name: aliasName });
}

/** A built-in function (never a plugin one); for code that calls a built-in by name. */
export function lookupBuiltin(name: string): FuncDef | undefined {
  return builtins.get(name.toLowerCase());
}

/** The built-ins plus this owner's plugin functions. Make one with `createFunctionRegistry()` (index.ts). */
export class FunctionRegistry implements FunctionSignatures {
  private readonly plugins = new Map<string, FuncDef>();

  lookup(name: string): FuncDef | undefined {
    const n = name.toLowerCase();
    return builtins.get(n) ?? this.plugins.get(n);
  }

  kind(name: string): string | undefined {
    return this.lookup(name)?.kind;
  }

  validate(name: string, args: readonly Expr[]): string | undefined {
    return this.lookup(name)?.validate?.(args as Expr[]);
  }

  /**
   * Registers or replaces a plugin function (a JavaScript UDF). Built-in names cannot be taken;
   * returns false then. Rules already planned keep the definition they compiled.
   */
  registerPlugin(def: FuncDef & { readonly plugin: string }): boolean {
    if (builtins.has(def.name)) return false;
    this.plugins.set(def.name, def);
    return true;
  }

  /** Removes a plugin function; built-ins are never removed. */
  unregisterPlugin(name: string): boolean {
    return this.plugins.delete(name.toLowerCase());
  }

  /** Every function name, built-ins first. */
  names(): string[] {
    return [...builtins.keys(), ...this.plugins.keys()];
  }
}

// ---------------------------------------------------------------------------------------------
// Argument classification for validators (functions.md §0.1): syntax only, never values.

const BOOL_OPS = new Set(["AND", "OR", "=", "!=", "<", "<=", ">", ">="]);

export function isNumericLit(e: Expr): boolean {
  return e.kind === "integer" || e.kind === "number";
}
export function isIntegerLit(e: Expr): boolean {
  return e.kind === "integer";
}
export function isFloatLit(e: Expr): boolean {
  return e.kind === "number";
}
export function isStringLit(e: Expr): boolean {
  return e.kind === "string";
}
export function isTimeLit(e: Expr): boolean {
  return e.kind === "timeUnit";
}
export function isFieldRef(e: Expr): boolean {
  return e.kind === "field";
}
/** `TRUE`/`FALSE`, or a binary expression with a boolean operator (incl. IN, BETWEEN, LIKE). */
export function isBooleanish(e: Expr): boolean {
  if (e.kind === "boolean" || e.kind === "in" || e.kind === "between" || e.kind === "like")
    return true;
  return e.kind === "binary" && BOOL_OPS.has(e.op);
}

// Shared validator messages.
export const expectArgs = (n: number, m: number) => `Expect ${n} arguments but found ${m}.`;
export const atLeastArgs = (n: number, m: number) => `At least has ${n} argument but found ${m}.`;
export const expectType = (type: string, k: number) => `Expect ${type} type for parameter ${k}`;

/** "Not a string/time/boolean-ish literal" — the number check. */
export function notNumber(e: Expr): boolean {
  return isStringLit(e) || isTimeLit(e) || isBooleanish(e);
}
/** "Not a numeric/time/boolean-ish literal" — the string check. */
export function notString(e: Expr): boolean {
  return isNumericLit(e) || isTimeLit(e) || isBooleanish(e);
}
/** "Not a float/string/time/boolean-ish literal" — the int check. */
export function notInt(e: Expr): boolean {
  return isFloatLit(e) || isStringLit(e) || isTimeLit(e) || isBooleanish(e);
}
/** "Not a numeric/time/string literal" — the bool check. */
export function notBool(e: Expr): boolean {
  return isNumericLit(e) || isTimeLit(e) || isStringLit(e);
}
/** "Not a numeric/string/boolean-ish literal" — the datetime check. */
export function notDatetime(e: Expr): boolean {
  return isNumericLit(e) || isStringLit(e) || isBooleanish(e);
}

/**
 * Builds the common validator: exact arity, then per-parameter checks in order.
 * `checks[i]` names the type reported for parameter i+1 and the predicate that rejects it.
 */
export function validateArgs(
  arity: number,
  checks: ReadonlyArray<readonly [type: string, reject: (e: Expr) => boolean] | undefined>,
): Validator {
  return (args) => {
    if (args.length !== arity) return expectArgs(arity, args.length);
    for (let i = 0; i < checks.length; i++) {
      const c = checks[i];
      if (c && c[1](args[i]!)) return expectType(c[0], i + 1);
    }
    return undefined;
  };
}

export const NUMBER = ["number - float or int", notNumber] as const;
export const STRING = ["string", notString] as const;
export const INT = ["int", notInt] as const;
export const BOOL = ["bool", notBool] as const;
export const DATETIME = ["datetime", notDatetime] as const;

/** Exactly n arguments of any kind. */
export function arity(n: number): Validator {
  return (args) => (args.length !== n ? expectArgs(n, args.length) : undefined);
}
