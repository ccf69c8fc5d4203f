/** The sandbox's prelude: floe's own code, evaluated in each UDF's context before its script. */

/**
 * Array methods whose loop is driven by `length` in C, where QuickJS polls no interrupt: on a sparse
 * array or an array-like (`Array(1e9).indexOf(1)`, `{length: 2**53}`) they would run for minutes.
 * A length no dense array can have under the memory limit (8 bytes per element) is refused.
 */
const LENGTH_DRIVEN = ["concat", "copyWithin", "every", "fill", "filter", "find", "findIndex", "findLast", "findLastIndex", "flat", "flatMap", "forEach", "includes", "indexOf", "join", "lastIndexOf", "map", "reduce", "reduceRight", "reverse", "shift", "slice", "some", "sort", "splice", "toLocaleString", "toReversed", "toSorted", "toSpliced", "unshift", "with"];

// Evaluated before the user's script, so the helpers hold the pristine built-ins whatever the
// script later does to `JSON` or the prototypes. None of them is reachable from the script.
export function prelude(maxLength: number): string {
  return `(function (parse, stringify, isFinite, NumberFn, StringFn, apply, defineProperty, getOwnPropertyDescriptor, RangeErrorFn, FunctionCtor) {
  var names = ${JSON.stringify(LENGTH_DRIVEN)};
  for (var i = 0; i < names.length; i++) (function (name) {
    var d = getOwnPropertyDescriptor(Array.prototype, name);
    if (!d || typeof d.value !== "function") return;
    var orig = d.value;
    var guarded = ({ [name]: function () {
      if (this !== null && this !== undefined && NumberFn(this.length) > ${maxLength}) throw new RangeErrorFn("array length exceeds the sandbox limit of ${maxLength}");
      return apply(orig, this, arguments);
    } })[name];
    defineProperty(Array.prototype, name, { value: guarded, writable: true, enumerable: false, configurable: true });
  })(names[i]);
  var last;
  function keep(r) { last = r; }
  function revive(k, v) {
    if (typeof v === "string" && v.length > 1 && v.charCodeAt(0) === 0) {
      if (v === "\\u0000NaN") return NaN;
      if (v === "\\u0000+Inf") return Infinity;
      if (v === "\\u0000-Inf") return -Infinity;
      if (v.charCodeAt(1) === 0) return v.slice(1);
    }
    return v;
  }
  function replace(k, v) {
    switch (typeof v) {
      case "number": if (!isFinite(v)) throw new Error("result is " + StringFn(v)); return v;
      case "bigint": return NumberFn(v);
      case "undefined": return null;
      case "function": case "symbol": throw new Error("unsupported result type " + typeof v);
    }
    return v;
  }
  return [
    function (text, special) { return special ? parse(text, revive) : parse(text); },
    function (v) { return stringify(v, replace); },
    function (e) {
      try { return e !== null && typeof e === "object" && typeof e.message === "string" ? e.message : StringFn(e); }
      catch (_) { return "error"; }
    },
    // The fast path's wrapper for n arguments: a number result comes back as is; anything else is
    // kept for take() and NaN (never a valid result) comes back instead. Built from strings and
    // the captured Function only, so whatever the script did to the prototypes does not matter.
    function (fn, n) {
      var p = "";
      for (var i = 0; i < n; i++) p += (i ? "," : "") + "a" + i;
      return new FunctionCtor("fn", "keep", "return function (" + p + ") { var r = fn(" + p + "); if (typeof r === 'number' && r === r) return r; keep(r); return NaN; };")(fn, keep);
    },
    function () { var r = last; last = undefined; return r; },
  ];
})(JSON.parse, JSON.stringify, isFinite, Number, String, Reflect.apply, Object.defineProperty, Object.getOwnPropertyDescriptor, RangeError, Function)`;
}
