/**
 * Go's `math.Exp`, `Log`, `Log10`, `Sinh`, `Cosh` and `Tanh` as eKuiper's amd64 builds compute them:
 * Exp and Log are Go's amd64 assembly (Exp on its AVX+FMA path), the rest Go's portable code on top.
 */
import { cvtsd2sl, fma, fromWords, hiWord, loWord, pow2 } from "./math-go-float.ts";

// exp_amd64.s: Shibata's method. x = k·ln2 + r, e^(r/16) by a Taylor polynomial, squared 4 times.
const EXP_OVERFLOW = 7.09782712893384e2;
const LOG2E = 1.442695040888963407359924681001892;
const LN2U = 0.69314718055966295651160180568695068359375;
const LN2L = 0.28235290563031577122588448175013436025525412068e-12;
const E2 = 0.5;
const E3 = 1.6666666666666666667e-1;
const E4 = 4.1666666666666666667e-2;
const E5 = 8.3333333333333333333e-3;
const E6 = 1.3888888888888888889e-3;
const E7 = 1.984126984126984127e-4;
const E8 = 2.4801587301587301587e-5;

/** Go `math.Exp` (amd64 assembly, FMA path). */
export function goExp(x: number): number {
  if (x - x !== 0) return x === -Infinity ? 0 : x; // NaN, ±Inf
  if (x > EXP_OVERFLOW) return Infinity;
  const k = cvtsd2sl(LOG2E * x);
  // The assembly builds its 2^k factor last; its range checks decide the result alone, so first.
  const b = k + 1023;
  if (b < -52) return 0;
  if (b >= 0x7ff) return Infinity;
  // k·LN2U is exact here (|k| < 1100, LN2U has 41 significant bits): its FMA is a plain subtraction.
  let r = x - k * LN2U;
  r = fma(-k, LN2L, r);
  r *= 0.0625;
  let p = fma(E8, r, E7);
  p = fma(p, r, E6);
  p = fma(p, r, E5);
  p = fma(p, r, E4);
  p = fma(p, r, E3);
  p = fma(p, r, E2);
  p = fma(p, r, 1);
  r *= p; // e^(r/16) - 1
  r *= r + 2;
  r *= r + 2;
  r *= r + 2;
  r = fma(r, r + 2, 1);
  // A subnormal result in two steps, as the assembly's denormal branch.
  if (b <= 0) return r * pow2(b - 1) * 2.2250738585072014e-308;
  return r * pow2(k);
}

// log_amd64.s: FreeBSD's e_log.c. The assembly splits x into f·2^k straight from the bits, so a
// subnormal x is read as if it were normal (Go's portable Log normalizes it first). It halves f
// when f <= √2/2 (the portable code: f < √2/2); kept, though no vector shows a difference.
const HSQRT2 = 7.07106781186547524401e-1;
const LN2HI = 6.9314718036912381649e-1;
const LN2LO = 1.90821492927058770002e-10;
const L1 = 6.66666666666673513e-1;
const L2 = 3.999999999940941908e-1;
const L3 = 2.857142874366239149e-1;
const L4 = 2.222219843214978396e-1;
const L5 = 1.818357216161805012e-1;
const L6 = 1.531383769920937332e-1;
const L7 = 1.479819860511658591e-1;

/** Go `math.Log` (amd64 assembly). */
export function goLog(x: number): number {
  const hi = hiWord(x);
  const lo = loWord();
  if ((hi & 0x7fffffff) === 0 && lo === 0) return -Infinity;
  if (hi >>> 31 === 1) return NaN;
  if (hi >= 0x7ff00000) return x; // +Inf, NaN
  let k = (hi >>> 20) - 0x3fe;
  let f1 = fromWords((hi & 0x000fffff) | 0x3fe00000, lo);
  if (f1 <= HSQRT2) {
    k--;
    f1 *= 2;
  }
  const f = f1 - 1;
  const s = f / (2 + f);
  const s2 = s * s;
  const s4 = s2 * s2;
  const t1 = s2 * (L1 + s4 * (L3 + s4 * (L5 + s4 * L7)));
  const t2 = s4 * (L2 + s4 * (L4 + s4 * L6));
  const hfsq = 0.5 * f * f;
  return k * LN2HI - (hfsq - (s * (hfsq + (t1 + t2)) + k * LN2LO) - f);
}

const INV_LN10 = 0.4342944819032518; // Go's constant 1/Ln10, rounded once (JS 1 / Math.LN10 differs)

/** Go `math.Log10`: Log(x)·(1/Ln10). */
export function goLog10(x: number): number {
  return goLog(x) * INV_LN10;
}

const SP0 = -0.6307673640497716991184787251e6;
const SP1 = -0.8991272022039509355398013511e5;
const SP2 = -0.2894211355989563807284660366e4;
const SP3 = -0.2630563213397497062819489e2;
const SQ0 = -0.6307673640497716991212077277e6;
const SQ1 = 0.1521517378790019070696485176e5;
const SQ2 = -0.173678953558233699533450911e3;

/** Go `math.Sinh`. */
export function goSinh(x: number): number {
  const neg = x < 0;
  if (neg) x = -x;
  let r: number;
  if (x > 21) r = goExp(x) * 0.5;
  else if (x > 0.5) {
    const ex = goExp(x);
    r = (ex - 1 / ex) * 0.5;
  } else {
    const sq = x * x;
    r = (((SP3 * sq + SP2) * sq + SP1) * sq + SP0) * x;
    r = r / (((sq + SQ2) * sq + SQ1) * sq + SQ0);
  }
  return neg ? -r : r;
}

/** Go `math.Cosh`. */
export function goCosh(x: number): number {
  x = Math.abs(x);
  if (x > 21) return goExp(x) * 0.5;
  const ex = goExp(x);
  return (ex + 1 / ex) * 0.5;
}

const TP0 = -9.64399179425052238628e-1;
const TP1 = -9.92877231001918586564e1;
const TP2 = -1.61468768441708447952e3;
const TQ0 = 1.12811678491632931402e2;
const TQ1 = 2.23548839060100448583e3;
const TQ2 = 4.84406305325125486048e3;
const HALF_MAXLOG = 0.5 * 8.8029691931113054295988e1; // 0.5·log(2^127), exact

/** Go `math.Tanh`. */
export function goTanh(x: number): number {
  const z = Math.abs(x);
  if (z > HALF_MAXLOG) return x < 0 ? -1 : 1;
  if (z >= 0.625) {
    const s = goExp(2 * z);
    const r = 1 - 2 / (s + 1);
    return x < 0 ? -r : r;
  }
  if (x === 0) return x;
  const s = x * x;
  return x + (x * s * ((TP0 * s + TP1) * s + TP2)) / (((s + TQ0) * s + TQ1) * s + TQ2);
}

/** eKuiper's `log(b, x)`: Log(x)/Log(b). */
export function goLogBase(b: number, x: number): number {
  return goLog(x) / goLog(b);
}
