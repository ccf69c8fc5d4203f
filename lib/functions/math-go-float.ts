/**
 * Float64 bit access and the fused multiply-add that Go's amd64 `math.Exp` executes (VFMADD):
 * the building blocks of the Go math ports in math-go-*.ts.
 */

const F64 = new Float64Array(1);
const U32 = new Uint32Array(F64.buffer);
// Index of the high (sign/exponent) word; the lower index on a little-endian host.
const HI = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1 ? 1 : 0;
const LO = 1 - HI;

/** The high 32 bits of x's IEEE 754 representation (sign, exponent, top of the mantissa). */
export function hiWord(x: number): number {
  F64[0] = x;
  return U32[HI]!;
}

/** The low 32 bits of x's representation; call right after `hiWord(x)` for the same x. */
export function loWord(): number {
  return U32[LO]!;
}

/** The double whose representation is hi:lo. */
export function fromWords(hi: number, lo: number): number {
  U32[HI] = hi;
  U32[LO] = lo;
  return F64[0]!;
}

const POW2 = new Float64Array(2046);
for (let e = -1022, p = 2.2250738585072014e-308; e <= 1023; e++, p *= 2) POW2[e + 1022] = p;

/** The double 2^e for a normal exponent, -1022 <= e <= 1023 (Go builds these from bits). */
export function pow2(e: number): number {
  return POW2[e + 1022]!;
}

// 2^52 + 2^51: adding and subtracting it rounds a double below 2^51 to an integer, ties to even.
const RINT = 6755399441055744;

/** x86 CVTSD2SL: round to nearest even, to int32; out of range gives the "integer indefinite" -2^31. */
export function cvtsd2sl(x: number): number {
  if (!(x > -2147483648.5 && x < 2147483647.5)) return -2147483648;
  return x + RINT - RINT;
}

const SPLIT = 134217729; // 2^27 + 1, Veltkamp's splitter

/**
 * Correctly rounded a·b + c (IEEE fusedMultiplyAdd), emulated with error-free transformations.
 * Exact while |a|, |b| < 2^995 and a·b's rounding error is not subnormal, which holds for every
 * operand Go's Exp kernel feeds it.
 */
export function fma(a: number, b: number, c: number): number {
  const p = a * b;
  if (p === 0 || c === 0 || !Number.isFinite(p) || !Number.isFinite(c)) return p + c;
  // p + e = a·b exactly.
  let t = SPLIT * a;
  const ah = t - (t - a);
  const al = a - ah;
  t = SPLIT * b;
  const bh = t - (t - b);
  const bl = b - bh;
  const e = ah * bh - p + ah * bl + al * bh + al * bl;
  // th + tl = p + c exactly.
  const th = p + c;
  let v = th - p;
  const tl = p - (th - v) + (c - v);
  // s + err = tl + e exactly; a·b + c = th + s + err.
  const s = tl + e;
  v = s - tl;
  const err = tl - (s - v) + (e - v);
  const r = th + s;
  // s exact: r is the one rounding of the exact sum.
  if (err === 0) return r;
  // Otherwise th was rounded, so |s| <= ~2 ulp(th) and err is far below ulp(r): r is right unless
  // th + s lies exactly halfway between two doubles, where err breaks the tie.
  const d = s - (r - th); // th + s = r + d exactly
  if (d === 0 || r + 2 * d - r !== 2 * d) return r;
  return err > 0 === d > 0 ? r + 2 * d : r;
}
