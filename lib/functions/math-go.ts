/**
 * Ports of the Go float routines whose exact bits eKuiper's math functions expose: `math.Pow`
 * (repeated squaring, not correctly rounded), `math.Round`, `cmplx.Cot` on a real argument,
 * the overflow-safe rounding of `round(x, d)`, and the arithmetic of `mod`, `radians`, `degrees`.
 */
import { goExp, goLog } from "./math-go-exp.ts";
import { fromWords, hiWord, loWord, pow2 } from "./math-go-float.ts";
import { fractionToFloat, goCos, goSin, payneHanek } from "./math-go-trig.ts";

/** Go `math.Frexp`: f = frac · 2^exp with |frac| in [0.5, 1). */
export function frexp(f: number): [number, number] {
  if (f === 0 || !Number.isFinite(f)) return [f, 0];
  let exp = 0;
  if (Math.abs(f) < 2.2250738585072014e-308) {
    f *= 4503599627370496; // 2^52
    exp = -52;
  }
  const hi = hiWord(f);
  exp += ((hi >>> 20) & 0x7ff) - 1023 + 1;
  return [fromWords((hi & 0x800fffff) | (1022 << 20), loWord()), exp];
}

/** Go `math.Ldexp`: frac · 2^exp with Go's rounding of denormal results. */
export function ldexp(frac: number, exp: number): number {
  if (frac === 0 || !Number.isFinite(frac)) return frac;
  const [f, e] = frexp(frac);
  // frac = m · 2^(e-1) with m in [1, 2): the exponent Go's normalize+bias arithmetic yields.
  exp += e - 1;
  const m = f * 2; // in [1, 2)
  if (exp < -1075) return frac < 0 ? -0 : 0;
  if (exp > 1023) return frac < 0 ? -Infinity : Infinity;
  if (exp < -1022) return m * pow2(exp + 53) * 1.1102230246251565e-16; // 2^-53
  return m * pow2(exp);
}

function isOddInt(x: number): boolean {
  if (Math.abs(x) >= 9007199254740992) return false;
  return Number.isInteger(x) && Math.abs(x) % 2 === 1;
}

/** Go `math.Pow`, bit for bit on the integer-exponent path. */
export function goPow(x: number, y: number): number {
  if (y === 0 || x === 1) return 1;
  if (y === 1) return x;
  if (Number.isNaN(x) || Number.isNaN(y)) return NaN;
  if (x === 0) {
    const neg = Object.is(x, -0);
    if (y < 0) return neg && isOddInt(y) ? -Infinity : Infinity;
    return neg && isOddInt(y) ? x : 0;
  }
  if (!Number.isFinite(y)) {
    if (x === -1) return 1;
    return (Math.abs(x) < 1) === (y > 0) ? 0 : Infinity;
  }
  if (!Number.isFinite(x)) {
    if (x < 0) return goPow(1 / x, -y);
    return y < 0 ? 0 : Infinity;
  }
  if (y === 0.5) return Math.sqrt(x);
  if (y === -0.5) return 1 / Math.sqrt(x);

  let yi = Math.trunc(Math.abs(y));
  let yf = Math.abs(y) - yi;
  if (yf !== 0 && x < 0) return NaN;
  if (yi >= 9223372036854775808) {
    if (x === -1) return 1;
    return (Math.abs(x) < 1) === (y > 0) ? 0 : Infinity;
  }
  let a1 = 1;
  let ae = 0;
  if (yf !== 0) {
    if (yf > 0.5) {
      yf--;
      yi++;
    }
    a1 = goExp(yf * goLog(x));
  }
  let [x1, xe] = frexp(x);
  for (let i = yi; i !== 0; i = Math.floor(i / 2)) {
    if (xe < -4096 || 4096 < xe) {
      ae += xe;
      break;
    }
    if (i % 2 === 1) {
      a1 *= x1;
      ae += xe;
    }
    x1 *= x1;
    xe *= 2;
    if (x1 < 0.5) {
      x1 += x1;
      xe--;
    }
  }
  if (y < 0) {
    a1 = 1 / a1;
    ae = -ae;
  }
  return ldexp(a1, ae);
}

/** Go `math.Round`: nearest integer, ties away from zero. */
export function goRound(v: number): number {
  const t = Math.trunc(v);
  if (Math.abs(v - t) >= 0.5) return t + Math.sign(v);
  return t;
}

/** eKuiper `round(x, d)`: via 10^d, redone exactly when x·10^d or 10^d overflows. */
export function roundDigits(x: number, d: bigint): number {
  const f = goPow(10, Number(d));
  const p = x * f;
  if (Number.isFinite(p) && Number.isFinite(f)) return goRound(p) / f;
  return roundExact(x, d);
}

/** round(x·10^d)/10^d in exact arithmetic; only reached with d > 0. */
function roundExact(x: number, d: bigint): number {
  if (!Number.isFinite(x) || x === 0) return x;
  // x = m / 2^k exactly; every double is an integer once scaled by 10^1074.
  if (d >= 1074n) return x;
  let m = x;
  let k = 0n;
  while (!Number.isInteger(m)) {
    m *= 2;
    k++;
  }
  const scaled = BigInt(m) * 10n ** d;
  const den = 1n << k;
  let q = scaled / den;
  const r = scaled - q * den;
  const twice = (r < 0n ? -r : r) * 2n;
  if (twice >= den) q += scaled < 0n ? -1n : 1n;
  if (q === 0n) return x < 0 ? -0 : 0;
  return Number(`${q}e-${d}`);
}

const PI1 = 3.141592502593994;
const PI2 = 1.5099578831723193e-7;
const PI3 = 1.0780605716316238e-14;

// 1/π in binary, 64 bits per word, leading with the (zero) integer part.
const M_PI = [
  0x0000000000000000n, 0x517cc1b727220a94n, 0xfe13abe8fa9a6ee0n, 0x6db14acc9e21c820n,
  0xff28b1d5ef5de2b0n, 0xdb92371d2126e970n, 0x0324977504e8c90en, 0x7f0ef58e5894d39fn,
  0x74411afa975da242n, 0x74ce38135a2fbf20n, 0x9cc8eb1cc1a99cfan, 0x4e422fc5defc941dn,
  0x8ffc4bffef02cc07n, 0xf79788c5ad05368fn, 0xb69b3f6793e584dbn, 0xa7a31fb34f2ff516n,
  0xba93dd63f5f2f8bdn, 0x9e839cfbc5294975n, 0x35fdafd88fc6ae84n, 0x2b0198237e3db5d5n,
];

/** Go `cmplx` `reducePi`: x modulo π into [-π/2, π/2]; Cody-Waite below 2^30, Payne-Hanek above. */
function reducePi(x: number): number {
  if (Math.abs(x) < 1073741824) {
    const t = Math.trunc(x / Math.PI + 0.5);
    return x - t * PI1 - t * PI2 - t * PI3;
  }
  const [hi, lo] = payneHanek(M_PI, x, 64);
  let f = fractionToFloat(hi, lo);
  if (f > 0.5) f--;
  return Math.PI * f;
}

/** Go `cmplx` tanSeries for a real argument. */
function tanSeries(z: number): number {
  const MACHEP = 1 / 9007199254740992;
  let x = Math.abs(2 * z);
  x = reducePi(x);
  x = x * x;
  let x2 = 1;
  let y2 = 1;
  let f = 1;
  let rn = 0;
  let d = 0;
  for (;;) {
    rn++;
    f *= rn;
    rn++;
    f *= rn;
    x2 *= x;
    y2 *= 0;
    let t = y2 + x2;
    t /= f;
    d += t;
    rn++;
    f *= rn;
    rn++;
    f *= rn;
    x2 *= x;
    y2 *= 0;
    t = y2 - x2;
    t /= f;
    d += t;
    if (!(Math.abs(t / d) > MACHEP)) break;
  }
  return d;
}

/** Real part of Go `cmplx.Cot(complex(x, 0))`; Infinity when the denominator is zero. */
export function goCot(x: number): number {
  let d = 1 - goCos(2 * x); // Cosh(2·imag) - Cos(2·real), Cosh(0) = 1
  if (Math.abs(d) < 0.25) d = tanSeries(x);
  if (d === 0) return Infinity;
  return goSin(2 * x) / d;
}

/** Go `math.Mod`: exact, like JS `%` (sign of x; NaN for y = 0 or infinite x; x for infinite y). */
export function goMod(x: number, y: number): number {
  return x % y;
}

/** eKuiper `radians(x)`: x·Pi/180, left to right. */
export function goRadians(x: number): number {
  return (x * Math.PI) / 180;
}

/** eKuiper `degrees(x)`: x·180/Pi, left to right. */
export function goDegrees(x: number): number {
  return (x * 180) / Math.PI;
}
