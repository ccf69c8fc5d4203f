/** Parse-time validation of window pseudo-function arguments (windows.md §1.1), exact messages. */
import type { Expr } from "./ast.ts";
import { renderExpr } from "./render.ts";

export const WINDOW_NAMES = new Set([
  "tumblingwindow",
  "hoppingwindow",
  "slidingwindow",
  "sessionwindow",
  "countwindow",
  "statewindow",
]);

const ARITY: Record<string, { ok: (n: number) => boolean; text: string }> = {
  tumblingwindow: { ok: (n) => n === 2, text: "2" },
  hoppingwindow: { ok: (n) => n === 3, text: "3" },
  sessionwindow: { ok: (n) => n === 3, text: "3" },
  slidingwindow: { ok: (n) => n === 2 || n === 3, text: "2 or 3" },
  statewindow: { ok: (n) => n === 1 || n === 2, text: "1 or 2" },
};

/** Returns the error message for a window call's arguments, or undefined. */
export function validateWindowArgs(name: string, args: Expr[]): string | undefined {
  if (name === "countwindow") return validateCount(args);
  const arity = ARITY[name]!;
  if (!arity.ok(args.length)) return `The arguments for ${name} should be ${arity.text}.\n`;
  if (name === "statewindow") return undefined;
  if (args[0]!.kind !== "timeUnit")
    return `The 1st argument for ${name} is expecting timer literal expression. One value of [dd|hh|mi|ss|ms].\n`;
  for (let i = 1; i < args.length; i++) {
    if (args[i]!.kind !== "integer")
      return `The ${i} argument for ${name} is expecting interger literal expression. \n`;
  }
  return undefined;
}

function validateCount(args: Expr[]): string | undefined {
  if (args.length === 0 || args.length > 2) return "Invalid parameter count.";
  const [n, m] = args as [Expr, Expr | undefined];
  if (!m) {
    if (n.kind !== "integer" || n.value <= 0n) return `Invalid parameter value ${renderExpr(n)}.`;
    return undefined;
  }
  if (n.kind !== "integer" || m.kind !== "integer")
    return `Invalid parameter value ${renderExpr(n)}, ${renderExpr(m)}.`;
  if (m.value > n.value)
    return `The second parameter value ${m.value} should be less than the first parameter ${n.value}.`;
  return undefined;
}
