/**
 * Go `fmt.Sprintf` / `Sprint` / `Sprintln` over floe values, for templates: the verbs real
 * templates use (%v %s %d %f %e %g %x %o %b %q %t %c %T %%) with flags, width and precision, and
 * Go's error forms (`%!d(string=x)`, `%!d(MISSING)`, `%!(EXTRA …)`).
 */
import { fmtV, formatFloatG, goQuote, goType, type Value } from "../value/values.ts";

interface Spec {
  minus: boolean;
  plus: boolean;
  sharp: boolean;
  space: boolean;
  zero: boolean;
  width: number | undefined;
  prec: number | undefined;
}

function pad(s: string, f: Spec, numeric: boolean): string {
  if (f.width === undefined || s.length >= f.width) return s;
  const n = f.width - s.length;
  if (f.minus) return s + " ".repeat(n);
  if (f.zero && numeric) {
    const sign = s[0] === "-" || s[0] === "+" ? s[0] : "";
    return sign + "0".repeat(n) + s.slice(sign.length);
  }
  return " ".repeat(n) + s;
}


function fixed(x: number, prec: number): string {
  if (!Number.isFinite(x)) return Number.isNaN(x) ? "NaN" : x > 0 ? "+Inf" : "-Inf";
  if (Math.abs(x) >= 1e21) return BigInt(Math.round(x)).toString() + (prec > 0 ? "." + "0".repeat(prec) : "");
  return x.toFixed(prec);
}

function expo(x: number, prec: number | undefined, upper: boolean): string {
  if (!Number.isFinite(x)) return Number.isNaN(x) ? "NaN" : x > 0 ? "+Inf" : "-Inf";
  let s = prec === undefined ? x.toExponential() : x.toExponential(prec);
  s = s.replace(/e([+-])(\d)$/, "e$10$2");
  return upper ? s.toUpperCase() : s;
}

function gFormat(x: number, prec: number | undefined, upper: boolean): string {
  if (prec === undefined) {
    const s = formatFloatG(x);
    return upper ? s.toUpperCase() : s;
  }
  if (!Number.isFinite(x)) return Number.isNaN(x) ? "NaN" : x > 0 ? "+Inf" : "-Inf";
  const p = prec === 0 ? 1 : prec;
  const e = x === 0 ? 0 : Math.floor(Math.log10(Math.abs(Number(x.toPrecision(p)))));
  let s: string;
  if (e < -4 || e >= p) s = expo(x, p - 1, upper).replace(/\.?0+e/, "e");
  else s = x.toFixed(Math.max(0, p - 1 - e)).replace(/(\.\d*?)0+$/, "$1").replace(/\.$/, "");
  return upper ? s.toUpperCase() : s;
}

function bad(verb: string, v: Value): string {
  return `%!${verb}(${goType(v)}=${fmtV(v)})`;
}

function intText(v: bigint, verb: string, f: Spec): string {
  const neg = v < 0n;
  const a = neg ? -v : v;
  let s: string;
  switch (verb) {
    case "d":
      s = a.toString();
      break;
    case "x":
      s = (f.sharp ? "0x" : "") + a.toString(16);
      break;
    case "X":
      s = (f.sharp ? "0X" : "") + a.toString(16).toUpperCase();
      break;
    case "o":
      s = (f.sharp ? "0" : "") + a.toString(8);
      break;
    case "b":
      s = a.toString(2);
      break;
    default:
      s = a.toString();
  }
  if (f.prec !== undefined && s.length < f.prec) s = "0".repeat(f.prec - s.length) + s;
  return (neg ? "-" : f.plus ? "+" : f.space ? " " : "") + s;
}

function floatText(x: number, verb: string, f: Spec): string {
  let s: string;
  switch (verb) {
    case "f":
    case "F":
      s = fixed(x, f.prec ?? 6);
      break;
    case "e":
    case "E":
      s = expo(x, f.prec ?? 6, verb === "E");
      break;
    case "g":
    case "G":
      s = gFormat(x, f.prec, verb === "G");
      break;
    default:
      s = formatFloatG(x);
  }
  if (x >= 0 && !s.startsWith("-")) s = (f.plus ? "+" : f.space ? " " : "") + s;
  return s;
}

function one(verb: string, v: Value, f: Spec): string {
  if (verb === "T") return pad(goType(v), f, false);
  if (verb === "v") {
    if (typeof v === "number") return pad(floatText(v, "g", { ...f, prec: f.prec }), f, true);
    if (typeof v === "bigint") return pad(intText(v, "d", f), f, true);
    if (f.sharp && typeof v === "string") return pad(goQuote(v), f, false);
    return pad(fmtV(v), f, false);
  }
  switch (verb) {
    case "d":
    case "o":
    case "b":
    case "x":
    case "X":
      if (typeof v === "bigint") return pad(intText(v, verb, f), f, true);
      if ((verb === "x" || verb === "X") && typeof v === "string") {
        let h = Buffer.from(v).toString("hex");
        if (verb === "X") h = h.toUpperCase();
        return pad(h, f, false);
      }
      if ((verb === "x" || verb === "X") && typeof v === "number") return pad(floatText(v, "g", f), f, true);
      return bad(verb, v);
    case "c":
      if (typeof v === "bigint") return pad(String.fromCodePoint(Number(v)), f, false);
      return bad(verb, v);
    case "e":
    case "E":
    case "f":
    case "F":
    case "g":
    case "G":
      if (typeof v === "number") return pad(floatText(v, verb, f), f, true);
      return bad(verb, v);
    case "s": {
      if (typeof v === "number" || typeof v === "bigint" || typeof v === "boolean" || v === null) return bad(verb, v);
      let s = v instanceof Uint8Array ? new TextDecoder().decode(v) : fmtV(v);
      if (f.prec !== undefined) s = [...s].slice(0, f.prec).join("");
      return pad(s, f, false);
    }
    case "q":
      if (typeof v === "string") return pad(goQuote(v), f, false);
      if (typeof v === "bigint") return pad("'" + String.fromCodePoint(Number(v)) + "'", f, false);
      return bad(verb, v);
    case "t":
      if (typeof v === "boolean") return pad(v ? "true" : "false", f, false);
      return bad(verb, v);
    default:
      return `%!${verb}(${goType(v)}=${fmtV(v)})`;
  }
}

/** Go `fmt.Sprintf`. */
export function sprintf(format: string, args: Value[]): string {
  let out = "";
  let a = 0;
  let i = 0;
  while (i < format.length) {
    const c = format[i]!;
    if (c !== "%") {
      out += c;
      i++;
      continue;
    }
    i++;
    const f: Spec = { minus: false, plus: false, sharp: false, space: false, zero: false, width: undefined, prec: undefined };
    for (;;) {
      const ch = format[i];
      if (ch === "-") f.minus = true;
      else if (ch === "+") f.plus = true;
      else if (ch === "#") f.sharp = true;
      else if (ch === " ") f.space = true;
      else if (ch === "0") f.zero = true;
      else break;
      i++;
    }
    const num = (): number | undefined => {
      if (format[i] === "*") {
        i++;
        const v = args[a++];
        return typeof v === "bigint" ? Number(v) : undefined;
      }
      let s = "";
      while (/[0-9]/.test(format[i] ?? "")) s += format[i++];
      return s ? Number(s) : undefined;
    };
    f.width = num();
    if (format[i] === ".") {
      i++;
      f.prec = num() ?? 0;
    }
    const verb = format[i++];
    if (verb === undefined) {
      out += "%!(NOVERB)";
      break;
    }
    if (verb === "%") {
      out += "%";
      continue;
    }
    if (a >= args.length) {
      out += `%!${verb}(MISSING)`;
      continue;
    }
    out += one(verb, args[a++]!, f);
  }
  if (a < args.length) {
    out += "%!(EXTRA " + args.slice(a).map((v) => `${goType(v)}=${fmtV(v)}`).join(", ") + ")";
  }
  return out;
}

/** Go `fmt.Sprint`: spaces between operands when neither is a string. */
export function sprint(args: Value[]): string {
  let out = "";
  for (let i = 0; i < args.length; i++) {
    const v = args[i]!;
    if (i > 0 && typeof v !== "string" && typeof args[i - 1] !== "string") out += " ";
    out += fmtV(v);
  }
  return out;
}

/** Go `fmt.Sprintln`: always spaces, then a newline. */
export function sprintln(args: Value[]): string {
  return args.map((v) => fmtV(v)).join(" ") + "\n";
}
