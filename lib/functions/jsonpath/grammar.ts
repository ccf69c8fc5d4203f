/**
 * The JSON path grammar of PaesslerAG/jsonpath v0.1.1: the `$` and `@` prefix extensions of the
 * gval parser (jsonpath-parse.ts), building a path from `.name`, `[…]`, `..`, `*` and `(…)`.
 */
import { RowError } from "../../errors.ts";
import { IDENT } from "./scan.ts";
import { constant, type Ev } from "./ops.ts";
import {
  PathBuilder,
  currentElement,
  directSelector,
  filterSelector,
  mapperSelector,
  multiSelector,
  rangeSelector,
  scriptSelector,
  starSelector,
} from "./path.ts";
import type { GvalParser } from "./parse.ts";

const MAX_INT32 = 2147483647;
const C = (s: string) => s.codePointAt(0)!;
const DOT = C(".");
const LBRACK = C("[");
const RBRACK = C("]");
const LPAREN = C("(");
const RPAREN = C(")");
const STAR = C("*");
const QUEST = C("?");
const COLON = C(":");
const COMMA = C(",");

/** `$…`: a path from the document. */
export function parseRootPath(p: GvalParser): Ev {
  const b = new PathBuilder();
  parsePath(p, b);
  return b.build();
}

/** `@…`: a path from the current element. */
export function parseCurrentPath(p: GvalParser): Ev {
  const b = new PathBuilder();
  b.plain(currentElement);
  parsePath(p, b);
  return b.build();
}

function parsePath(p: GvalParser, b: PathBuilder): void {
  for (;;) {
    const s = p.scan();
    if (s === DOT) parseSelect(p, b);
    else if (s === LBRACK) {
      const { keys, sep } = parseBracket(p);
      if (sep === COLON) {
        if (keys.length > 3) throw new RowError("range query has at least the parameter [min:max:step]");
        const defaults = [constant(0), constant(MAX_INT32), constant(1)];
        while (keys.length < 3) keys.push(defaults[keys.length]!);
        b.ambiguous(rangeSelector(keys[0]!, keys[1]!, keys[2]!));
      } else if (sep === QUEST) {
        if (keys.length !== 1) throw new RowError("filter needs exactly one key");
        b.ambiguous(filterSelector(keys[0]!));
      } else if (keys.length === 1) b.plain(directSelector(keys[0]!));
      else b.ambiguous(multiSelector(keys));
    } else if (s === LPAREN) parseScript(p, b);
    else {
      p.camo("jsonpath", DOT, LBRACK, LPAREN);
      return;
    }
  }
}

function parseSelect(p: GvalParser, b: PathBuilder): void {
  const s = p.scan();
  if (s === IDENT) b.plain(directSelector(constant(p.sc.tokenText())));
  else if (s === DOT) {
    b.ambiguous(mapperSelector);
    parseMapper(p, b);
  } else if (s === STAR) b.ambiguous(starSelector);
  else throw p.expected("JSON select", IDENT, DOT, STAR);
}

function parseMapper(p: GvalParser, b: PathBuilder): void {
  const s = p.scan();
  if (s === IDENT) b.plain(directSelector(constant(p.sc.tokenText())));
  else if (s === LBRACK) {
    const { keys, sep } = parseBracket(p);
    if (sep === COLON) throw new RowError("mapper can not be combined with range query");
    if (sep === QUEST) {
      if (keys.length !== 1) throw new RowError("filter needs exactly one key");
      b.ambiguous(filterSelector(keys[0]!));
    } else b.ambiguous(multiSelector(keys));
  } else if (s === STAR) b.ambiguous(starSelector);
  else if (s === LPAREN) parseScript(p, b);
  else throw p.expected("JSON mapper", LBRACK, IDENT, STAR);
}

function parseScript(p: GvalParser, b: PathBuilder): void {
  const script = p.parseExpression();
  if (p.scan() !== RPAREN) throw p.expected("jsonpath script", RPAREN);
  b.plain(scriptSelector(script));
}

/** The keys of `[…]` and their separator: `:` slice, `,` union, `?` filter, 0 for `[*]`. */
function parseBracket(p: GvalParser): { keys: Ev[]; sep: number } {
  const keys: Ev[] = [];
  let sep = 0;
  for (;;) {
    let scan = p.scan();
    let skipScan = false;
    if (scan === QUEST) skipScan = true;
    else if (scan === COLON) {
      keys.push(constant(keys.length === 1 ? MAX_INT32 : 0));
      skipScan = true;
    } else if (scan === STAR) {
      if (p.scan() !== RBRACK) throw p.expected("JSON bracket star", RBRACK);
      return { keys: [], sep: 0 };
    } else if (scan === RBRACK && sep === COLON) skipScan = true;
    else {
      p.camo("jsonpath brackets");
      keys.push(p.parseExpression());
    }
    if (!skipScan) scan = p.scan();
    if (sep === 0) sep = scan;
    if (scan === RBRACK) return { keys, sep };
    if (scan === QUEST) {
      if (keys.length !== 0) throw p.expected("JSON filter", RBRACK);
    } else if (scan !== COLON && scan !== COMMA) {
      throw p.expected("JSON bracket separator", COLON, COMMA);
    }
    // Go formats the two runes with %v: their code points.
    if (sep !== scan) throw new RowError(`mixed ${sep} and ${scan} in JSON bracket`);
  }
}
