/** `object_pick(obj, k1, k2 …)` / `object_pick(obj, [k1, …])` (functions.md §11.1). */
import { RowError } from "../errors.ts";
import { fmtV, isObj, type Obj, type Value } from "../value/values.ts";
import { setMember } from "./key-order.ts";

function has(o: Obj, k: string): boolean {
  return Object.hasOwn(o, k);
}

/** Copies member `key` (dots navigate nested objects) of `obj` into `result`. */
function pick(obj: Obj, key: string, result: Obj): void {
  if (!key.includes(".")) {
    if (has(obj, key)) setMember(result, key, obj[key]!);
    return;
  }
  const path = key.split(".");
  const last = path.length - 1;
  let cur: Obj = obj;
  for (let i = 0; i < last; i++) {
    const next = has(cur, path[i]!) ? cur[path[i]!]! : null;
    if (!isObj(next)) return;
    cur = next;
  }
  if (!has(cur, path[last]!)) return;
  // [quirk] eKuiper descends only through members it has just created: when a member already
  // exists the insertion point stays put, so `"a.b", "a.c"` yields {"a":{"b"…},"c"…}.
  let r: Obj = result;
  for (let i = 0; i < last; i++) {
    const p = path[i]!;
    const existing = has(r, p) ? r[p]! : null;
    if (existing === null) {
      const created: Obj = {};
      setMember(r, p, created);
      r = created;
    }
  }
  setMember(r, path[last]!, cur[path[last]!]!);
}

export function objectPick(args: Value[]): Value {
  const x = args[0]!;
  if (x === null) return null;
  if (!isObj(x)) throw new RowError(`the first argument should be a map, got ${fmtV(x)}`);
  const result: Obj = {};
  const second = args[1]!;
  if (Array.isArray(second)) {
    for (let i = 0; i < second.length; i++) {
      const k = second[i]!;
      if (typeof k === "string") pick(x, k, result);
    }
  } else if (typeof second === "string") {
    for (let i = 1; i < args.length; i++) {
      const k = args[i]!;
      if (typeof k === "string") pick(x, k, result);
    }
  }
  return result;
}
