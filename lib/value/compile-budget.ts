/**
 * The compile budget: one set of input limits for everything user-supplied that floe compiles on
 * its one thread — protobuf schemas, SQL statements, graph rules, sink templates, JavaScript UDF
 * source. Each limit keeps the compiler's cost linear and small (docs/compile-budget.md has what
 * each costs at its default), and is checked by a linear scan before the compiler sees the input,
 * so an over-budget definition is refused before the expensive work starts. A refusal is a
 * `CompileBudgetError` (a TooLargeError: the REST API answers 413) whose message names the limit
 * and the setting that changes it. The daemon and pipe mode set the limits from kuiper.yaml
 * (`basic.compileLimits.*`) when they load it; until then (tests) the defaults hold.
 */
import { CompileBudgetError } from "../errors.ts";

export interface CompileLimits {
  /** Bytes of one `.proto` file (its text as uploaded, before any parse). */
  readonly protoBytes: number;
  /** Fields of one message (values of one enum): protobufjs adds each in time linear in those before it. */
  readonly protoFields: number;
  /** Messages, enums, fields and values of one file together. */
  readonly protoDeclarations: number;
  /** Nesting of `{ }` blocks in one file (messages in messages, options). */
  readonly protoDepth: number;
  /** Characters of one SQL statement. */
  readonly sqlLength: number;
  /** Nesting of one SQL statement's expressions (parentheses, operators, calls, CASE). */
  readonly sqlDepth: number;
  /** Nodes of one graph rule. */
  readonly graphNodes: number;
  /** Bytes of one template (a sink's `dataTemplate`, a templated property). */
  readonly templateBytes: number;
  /** Nesting of `{{if}}`/`{{range}}`/`{{with}}` blocks and parentheses in one template. */
  readonly templateDepth: number;
  /** Bytes of one JavaScript UDF's source. */
  readonly udfBytes: number;
}

export const DEFAULT_COMPILE_LIMITS: CompileLimits = {
  protoBytes: 256 * 1024,
  protoFields: 512,
  protoDeclarations: 2048,
  protoDepth: 32,
  sqlLength: 32 * 1024,
  sqlDepth: 256,
  graphNodes: 50,
  templateBytes: 16 * 1024,
  templateDepth: 64,
  udfBytes: 64 * 1024,
};

/** The settings' names under `basic.compileLimits` (kuiper.yaml, `KUIPER__BASIC__COMPILELIMITS__<NAME>`). */
export const COMPILE_LIMIT_KEYS = Object.keys(DEFAULT_COMPILE_LIMITS) as (keyof CompileLimits)[];

let current: CompileLimits = DEFAULT_COMPILE_LIMITS;

/** The limits in force. */
export function compileLimits(): CompileLimits {
  return current;
}

/** Sets the limits in force (the daemon at start, from its settings); returns the previous ones. */
export function setCompileLimits(limits: CompileLimits): CompileLimits {
  const before = current;
  current = limits;
  return before;
}

/**
 * Throws a CompileBudgetError when `count` passes limit `key`: `<what> has <count> <unit>, more
 * than the limit of <max> (basic.compileLimits.<key>)`.
 */
export function checkLimit(key: keyof CompileLimits, count: number, what: string, unit: string): void {
  const max = current[key];
  if (count > max) throw new CompileBudgetError(`${what} has ${count} ${unit}, more than the limit of ${max} (basic.compileLimits.${key})`, key);
}

/**
 * The refusal of a scan that stops as soon as it passes limit `key` (nesting, which it does not
 * count to the end): `<what>: more than <max> <unit> (basic.compileLimits.<key>)`.
 */
export function beyondLimit(key: keyof CompileLimits, what: string, unit: string): CompileBudgetError {
  return new CompileBudgetError(`${what}: more than ${current[key]} ${unit} (basic.compileLimits.${key})`, key);
}
