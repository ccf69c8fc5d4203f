/**
 * The pattern of one SQL call site: a constant pattern is compiled on the first row and then only
 * compared (the same string each row), so no row pays a cache lookup; a pattern from a column
 * goes through the bounded cache when it changes.
 */
import type { CallCtx } from "../registry.ts";
import { goRegex, type GoRegex } from "./compile.ts";

class CallSiteRegex {
  constructor(
    public pattern: string,
    public re: GoRegex,
  ) {}
}

/** The compiled Go regexp for `pattern` at this call site; throws RowError for an invalid pattern. */
export function callSiteRegex(ctx: CallCtx, pattern: string): GoRegex {
  const memo = ctx.state;
  if (memo instanceof CallSiteRegex) {
    if (memo.pattern === pattern) return memo.re;
    const re = goRegex(pattern);
    memo.pattern = pattern;
    memo.re = re;
    return re;
  }
  const re = goRegex(pattern);
  ctx.state = new CallSiteRegex(pattern, re);
  return re;
}
