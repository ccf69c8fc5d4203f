/**
 * Byte order of UTF-8 strings, the order Go uses for map keys and string comparison. JS compares
 * UTF-16 code units, which disagrees only between surrogates and U+E000..U+FFFF.
 */
import type { Obj } from "../value/values.ts";

function fixSurrogate(c: number): number {
  return c >= 0xe000 ? c - 0x800 : c + 0x2000;
}

/** Compares two strings by their UTF-8 bytes. */
export function compareBytewise(a: string, b: string): number {
  const n = a.length < b.length ? a.length : b.length;
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x !== y) {
      if (x >= 0xd800 && y >= 0xd800) return fixSurrogate(x) - fixSurrogate(y);
      return x - y;
    }
  }
  return a.length - b.length;
}

/** The own keys of an object in ascending byte order (floe's fixed map iteration order). */
export function sortedKeys(o: Obj): string[] {
  return Object.keys(o).sort(compareBytewise);
}

/** Sets an own member, also for the key `__proto__` (plain assignment would change the prototype). */
export function setMember(o: Obj, k: string, v: Obj[string]): void {
  if (k === "__proto__") {
    Object.defineProperty(o, k, { value: v, enumerable: true, writable: true, configurable: true });
  } else {
    o[k] = v;
  }
}
