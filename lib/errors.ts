/**
 * The one error hierarchy of floe. Codes are eKuiper's (pkg/errorx), so REST bodies and CLI output
 * carry the same numbers an eKuiper client expects.
 */
export const ErrCode = {
  undefined: 1000,
  general: 1001,
  notFound: 1002,
  io: 1003,
  converter: 1004,
  parser: 2001,
  plan: 2101,
  executor: 2201,
  streamTable: 3000,
  rule: 4000,
  confKey: 5000,
} as const;
export type ErrCode = (typeof ErrCode)[keyof typeof ErrCode];

/** An error with an eKuiper code; `message` is byte-identical to eKuiper's where the spec gives it. */
export class EngineError extends Error {
  readonly code: number;
  constructor(message: string, code: number = ErrCode.general, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "EngineError";
    this.code = code;
  }
}

/** A SQL syntax error; `line`/`column` are 1-based positions of the offending token. */
export class ParseError extends EngineError {
  readonly line: number;
  readonly column: number;
  constructor(message: string, line: number, column: number) {
    super(message, ErrCode.parser);
    this.name = "ParseError";
    this.line = line;
    this.column = column;
  }
}

/**
 * A definition or request body past one of floe's documented size limits (docs/daemon.md, "Errors, limits and the safe start"):
 * the REST API answers 413 with the usual `{"error":1000,"message":…}` body.
 */
export class TooLargeError extends EngineError {
  constructor(message: string) {
    super(message, ErrCode.undefined);
    this.name = "TooLargeError";
  }
}

/**
 * A definition past one of the compile budget's limits (value/compile-budget.ts): 413 like any
 * size limit; `limit` names the setting (`basic.compileLimits.<limit>`).
 */
export class CompileBudgetError extends TooLargeError {
  readonly limit: string;
  constructor(message: string, limit: string) {
    super(message);
    this.name = "CompileBudgetError";
    this.limit = limit;
  }
}

/** A plan-time (analyzer) error: the rule cannot be created. */
export class PlanError extends EngineError {
  constructor(message: string) {
    super(message, ErrCode.plan);
    this.name = "PlanError";
  }
}

/**
 * A per-record evaluation failure. Thrown by expression closures, caught once per record at the
 * operator boundary, where it is counted and (with `sendError`) forwarded as `{"error": ...}`.
 * It deliberately does not extend Error: records can fail at line rate and a stack trace per
 * failure would cost more than the record itself.
 */
export class RowError {
  readonly message: string;
  constructor(message: string) {
    this.message = message;
  }
  toString(): string {
    return this.message;
  }
}

/**
 * An error a function returns as its *value* (eKuiper's `ln`, `log`, `sqrt`): it propagates
 * without the `call func <name> error: ` prefix that every other function failure gets.
 */
export class ErrorValue extends RowError {}

export function isRowError(e: unknown): e is RowError {
  return e instanceof RowError;
}

/** Text of any thrown value, for messages and logs. */
export function errorText(e: unknown): string {
  if (e instanceof RowError || e instanceof Error) return e.message;
  return String(e);
}

/**
 * Text of a failure caught by a rule's error boundary: never empty (an error without a message
 * is named by its class), and an engine bug or a stack overflow says what it was
 * (`RangeError: Maximum call stack size exceeded.`).
 */
export function failureText(e: unknown): string {
  if (e instanceof RowError || e instanceof EngineError) return e.message || e.constructor.name;
  if (e instanceof Error) return e.message ? (e.name === "Error" ? e.message : `${e.name}: ${e.message}`) : e.name || "Error";
  const s = String(e);
  return s === "" ? "unknown error" : s;
}

/**
 * A connection-type failure of a connector (not connected, transport error, timeout): the kind of
 * error a sink retries when `resendInterval` or the cache is on (rules-and-sinks.md §3.4).
 */
export class IoError extends EngineError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, ErrCode.io, options);
    this.name = "IoError";
  }
}
