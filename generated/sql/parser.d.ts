// Types of the peggy-generated parser beside it (parser.js, built from lib/sql/grammar/*.peggy by `make parser`); written by hand.
export interface PeggyLocation {
  start: { offset: number; line: number; column: number };
  end: { offset: number; line: number; column: number };
}
export class SyntaxError extends Error {
  location: PeggyLocation;
  expected: Array<{ type: string; text?: string; description?: string }> | null;
  found: string | null;
}
export interface ParseOptions {
  startRule?: "Statement" | "SelectStatement" | "CreateStatement";
  /** Is `name` a known function (any case as written)? */
  isFunction?: (name: string) => boolean;
  /** Validates a call's arguments; returns the message or undefined. */
  validate?: (name: string, args: unknown[]) => string | undefined;
}
export function parse(input: string, options?: ParseOptions): unknown;
