/**
 * JSON path selectors and paths, as PaesslerAG/jsonpath v0.1.1 evaluates them (functions.md
 * §9.2). A path of plain selectors yields one value and reports errors; once an ambiguous
 * selector (wildcard, union, slice, `..`, filter) appears it yields every match as an array and
 * matches whose later plain selectors fail are dropped.
 */
import { RowError } from "../../errors.ts";
import { goType, isObj, type Value } from "../../value/values.ts";
import { sortedKeys } from "../key-order.ts";
import { evalBool, evalInt, evalString, type Ev } from "./ops.ts";

/** One value from the value `v`; `cur` is the enclosing current element, `root` the document. */
export type PlainSelector = (cur: Value, root: Value, v: Value) => Value;
/** Every match below `v`. */
export type AmbiguousSelector = (
  cur: Value,
  root: Value,
  v: Value,
  match: (v: Value) => void,
) => void;

// Object members are visited in ascending byte order of the keys (Go's order is random).
function visitAll(v: Value, visit: (child: Value) => void): void {
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) visit(v[i]!);
  } else if (isObj(v)) {
    const ks = sortedKeys(v);
    for (let i = 0; i < ks.length; i++) visit(v[ks[i]!]!);
  }
}

function selectValue(key: Ev, root: Value, v: Value): Value {
  if (Array.isArray(v)) {
    let i: number;
    try {
      i = evalInt(key, v, root);
    } catch (e) {
      throw new RowError(`could not select value, invalid key: ${(e as RowError).message}`);
    }
    if (i < 0 || i >= v.length) throw new RowError(`index ${i} out of bounds`);
    return v[i]!;
  }
  if (isObj(v)) {
    let k: string;
    try {
      k = evalString(key, v, root);
    } catch (e) {
      throw new RowError(`could not select value, invalid key: ${(e as RowError).message}`);
    }
    if (Object.hasOwn(v, k)) return v[k]!;
    throw new RowError(`unknown key ${k}`);
  }
  throw new RowError(
    `unsupported value type ${goType(v)} for select, expected map[string]interface{} or []interface{}`,
  );
}

export const currentElement: PlainSelector = (cur) => cur;

export function directSelector(key: Ev): PlainSelector {
  return (_cur, root, v) => selectValue(key, root, v);
}

export function scriptSelector(script: Ev): PlainSelector {
  return (_cur, root, v) => script(v, root);
}

export const starSelector: AmbiguousSelector = (_cur, _root, v, match) => visitAll(v, match);

export function multiSelector(keys: Ev[]): AmbiguousSelector {
  if (keys.length === 0) return starSelector;
  return (_cur, root, v, match) => {
    for (const k of keys) {
      let e: Value;
      try {
        e = selectValue(k, root, v);
      } catch {
        continue;
      }
      match(e);
    }
  };
}

/** `..`: the value itself, then every descendant, pre-order. */
export const mapperSelector: AmbiguousSelector = function mapper(cur, root, v, match) {
  match(v);
  visitAll(v, (child) => mapper(cur, root, child, match));
};

export function filterSelector(filter: Ev): AmbiguousSelector {
  return (_cur, root, v, match) => {
    visitAll(v, (child) => {
      let ok: boolean;
      try {
        ok = evalBool(filter, child, root);
      } catch {
        return;
      }
      if (ok) match(child);
    });
  };
}

function negmax(n: number, max: number): number {
  if (n < 0) return Math.max(max + n, 0);
  return n > max ? max : n;
}

export function rangeSelector(min: Ev, max: Ev, step: Ev): AmbiguousSelector {
  return (_cur, root, v, match) => {
    if (!Array.isArray(v)) return;
    let lo: number;
    let hi: number;
    let st: number;
    try {
      lo = evalInt(min, v, root);
      hi = evalInt(max, v, root);
      st = evalInt(step, v, root);
    } catch {
      return;
    }
    // [quirk] compared before negative bounds are resolved: [1:-1] selects nothing.
    if (lo > hi) return;
    const n = v.length;
    lo = negmax(lo, n);
    hi = negmax(hi, n);
    if (st === 0) st = 1;
    if (st > 0) for (let i = lo; i < hi; i += st) match(v[i]!);
    else for (let i = hi - 1; i >= lo; i += st) match(v[i]!);
  };
}

/** A compiled path: its value, and (for use as a parent) a visit of its matches. */
export interface Path {
  evaluate(cur: Value, root: Value): Value;
  visit(cur: Value, root: Value, visit: (v: Value) => void): void;
}

function runPlain(sels: PlainSelector[], cur: Value, root: Value, v: Value): Value {
  for (let i = 0; i < sels.length; i++) v = sels[i]!(cur, root, v);
  return v;
}

class PlainPath implements Path {
  constructor(readonly sels: PlainSelector[]) {}
  evaluate(cur: Value, root: Value): Value {
    return runPlain(this.sels, cur, root, root);
  }
  visit(cur: Value, root: Value, visit: (v: Value) => void): void {
    let v: Value;
    try {
      v = runPlain(this.sels, cur, root, root);
    } catch {
      return;
    }
    visit(v);
  }
}

class AmbiguousPath implements Path {
  readonly ending: PlainSelector[] = [];
  constructor(
    readonly parent: Path,
    readonly branch: AmbiguousSelector,
  ) {}
  evaluate(cur: Value, root: Value): Value {
    const out: Value[] = [];
    this.visit(cur, root, (v) => out.push(v));
    return out;
  }
  visit(cur: Value, root: Value, visit: (v: Value) => void): void {
    const ending = this.ending;
    const match =
      ending.length === 0
        ? visit
        : (v: Value) => {
            let r: Value;
            try {
              r = runPlain(ending, cur, root, v);
            } catch {
              return;
            }
            visit(r);
          };
    this.parent.visit(cur, root, (v) => this.branch(cur, root, v, match));
  }
}

/** Accumulates selectors while parsing, like jsonpath's `path.with…Selector`. */
export class PathBuilder {
  private path: PlainPath | AmbiguousPath = new PlainPath([]);

  plain(sel: PlainSelector): void {
    if (this.path instanceof PlainPath) this.path.sels.push(sel);
    else this.path.ending.push(sel);
  }

  ambiguous(sel: AmbiguousSelector): void {
    this.path = new AmbiguousPath(this.path, sel);
  }

  build(): Ev {
    const p = this.path;
    return (cur, root) => p.evaluate(cur, root);
  }
}
