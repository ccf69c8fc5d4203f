/**
 * Go's `math.Sin`, `Cos` and `Tan` (Cephes polynomials, portable Go on every architecture): Cody-Waite
 * reduction by π/4 below 2^29, Payne-Hanek reduction with a 1,280-bit 4/π above.
 */
import { fromWords, hiWord, loWord } from "./math-go-float.ts";

const PI4A = 7.85398125648498535156e-1;
const PI4B = 3.77489470793079817668e-8;
const PI4C = 2.69515142907905952645e-15;
const FOUR_OVER_PI = 1.2732395447351628; // Go's constant 4/Pi, rounded once (JS 4 / Math.PI agrees)
const PI4 = Math.PI / 4;
const REDUCE_THRESHOLD = 536870912; // 2^29

const S0 = 1.5896230157654656806e-10;
const S1 = -2.50507477628578072866e-8;
const S2 = 2.75573136213857245213e-6;
const S3 = -1.98412698295895385996e-4;
const S4 = 8.33333333332211858878e-3;
const S5 = -1.66666666666666307295e-1;
const C0 = -1.135853652138768173e-11;
const C1 = 2.08757008419747316778e-9;
const C2 = -2.75573141792967388112e-7;
const C3 = 2.48015872888517045348e-5;
const C4 = -1.38888888888730564116e-3;
const C5 = 4.16666666666665929218e-2;

// The octant of the last `reduce` call (module scratch: no allocation).
let octant = 0;

/** Sets `octant` (0..7, even) and returns z = x - octant·π/4, for x >= 0. */
function reduce(x: number): number {
  if (x >= REDUCE_THRESHOLD) return trigReduce(x);
  let j = Math.trunc(x * FOUR_OVER_PI);
  let y = j;
  if ((j & 1) === 1) {
    j++;
    y++;
  }
  octant = j & 7;
  return x - y * PI4A - y * PI4B - y * PI4C;
}

function sinPoly(z: number, zz: number): number {
  return z + z * zz * (((((S0 * zz + S1) * zz + S2) * zz + S3) * zz + S4) * zz + S5);
}

function cosPoly(zz: number): number {
  return 1.0 - 0.5 * zz + zz * zz * (((((C0 * zz + C1) * zz + C2) * zz + C3) * zz + C4) * zz + C5);
}

/** Go `math.Sin`. */
export function goSin(x: number): number {
  if (x === 0 || Number.isNaN(x)) return x;
  if (!Number.isFinite(x)) return NaN;
  let neg = false;
  if (x < 0) {
    x = -x;
    neg = true;
  }
  const z = reduce(x);
  let j = octant;
  if (j > 3) {
    neg = !neg;
    j -= 4;
  }
  const zz = z * z;
  const y = j === 1 || j === 2 ? cosPoly(zz) : sinPoly(z, zz);
  return neg ? -y : y;
}

/** Go `math.Cos`. */
export function goCos(x: number): number {
  if (!Number.isFinite(x)) return NaN;
  x = Math.abs(x);
  const z = reduce(x);
  let j = octant;
  let neg = false;
  if (j > 3) {
    j -= 4;
    neg = true;
  }
  if (j > 1) neg = !neg;
  const zz = z * z;
  const y = j === 1 || j === 2 ? sinPoly(z, zz) : cosPoly(zz);
  return neg ? -y : y;
}

const TP0 = -1.30936939181383777646e4;
const TP1 = 1.1535166483858741614e6;
const TP2 = -1.79565251976484877988e7;
const TQ1 = 1.36812963470692954678e4;
const TQ2 = -1.32089234440210967447e6;
const TQ3 = 2.50083801823357915839e7;
const TQ4 = -5.38695755929454629881e7;

/** Go `math.Tan`. */
export function goTan(x: number): number {
  if (x === 0 || Number.isNaN(x)) return x;
  if (!Number.isFinite(x)) return NaN;
  let neg = false;
  if (x < 0) {
    x = -x;
    neg = true;
  }
  const z = reduce(x);
  const zz = z * z;
  let y = z;
  if (zz > 1e-14) {
    y = z + z * ((zz * ((TP0 * zz + TP1) * zz + TP2)) / ((((zz + TQ1) * zz + TQ2) * zz + TQ3) * zz + TQ4));
  }
  if ((octant & 2) === 2) y = -1 / y;
  return neg ? -y : y;
}

const M64 = (1n << 64n) - 1n;
// 4/π in binary, 64 bits per word, leading with the integer part.
const M_PI4 = [
  0x0000000000000001n, 0x45f306dc9c882a53n, 0xf84eafa3ea69bb81n, 0xb6c52b3278872083n,
  0xfca2c757bd778ac3n, 0x6e48dc74849ba5c0n, 0x0c925dd413a32439n, 0xfc3bd63962534e7dn,
  0xd1046bea5d768909n, 0xd338e04d68befc82n, 0x7323ac7306a673e9n, 0x3908bf177bf25076n,
  0x3ff12fffbc0b301fn, 0xde5e2316b414da3en, 0xda6cfd9e4f96136en, 0x9e8c7ecd3cbfd45an,
  0xea4f758fd7cbe2f6n, 0x7a0e73ef14a525d4n, 0xd7f6bf623f1aba10n, 0xac06608df8f6d757n,
];

/**
 * Payne-Hanek's product, as Go computes it: the mantissa of a finite x (>= 2^29) times the 192
 * bits of `table` that start `exponent + offset` bits in, modulo 2^128, as hi:lo. (`table` is a
 * constant such as 4/π in 64-bit words.)
 */
export function payneHanek(table: readonly bigint[], x: number, offset: number): [bigint, bigint] {
  const hw = hiWord(x);
  const ix = (BigInt((hw & 0xfffff) | 0x100000) << 32n) | BigInt(loWord());
  const at = ((hw >>> 20) & 0x7ff) - 1023 - 52 + offset;
  const digit = Math.floor(at / 64);
  const shift = BigInt(at % 64);
  // Go's shift of a uint64 by 64 gives 0, as BigInt's does here.
  const word = (i: number): bigint => ((table[digit + i]! << shift) | (table[digit + i + 1]! >> (64n - shift))) & M64;
  const p1 = word(1) * ix;
  const sum = (p1 & M64) + ((word(2) * ix) >> 64n);
  return [(word(0) * ix + (p1 >> 64n) + (sum >> 64n)) & M64, sum & M64];
}

/**
 * The fraction hi:lo (a 128-bit number in [0, 1)) as a double, truncated to 52 bits after its
 * leading one, as Go's Payne-Hanek code builds it.
 */
export function fractionToFloat(hi: bigint, lo: bigint): number {
  const lz = hi === 0n ? 64 : 64 - hi.toString(2).length;
  const e = BigInt(1023 - (lz + 1));
  const n = BigInt(lz + 1);
  // Go's shifts by 64 or more give 0.
  hi = (n >= 64n ? 0n : (hi << n) & M64) | (n > 64n ? 0n : lo >> (64n - n));
  hi = (hi >> 12n) | (e << 52n);
  return fromWords(Number(hi >> 32n), Number(hi & 0xffffffffn));
}

/** Go `trigReduce`: Payne-Hanek reduction of x >= 2^29 to z in [0, π/4) and the octant. */
function trigReduce(x: number): number {
  const [hi, lo] = payneHanek(M_PI4, x, 61);
  let j = Number(hi >> 61n);
  // Go shifts lo's top bits into hi but then reads lo unshifted: kept, for its last bits.
  let z = fractionToFloat(((hi << 3n) | (lo >> 61n)) & M64, lo);
  if ((j & 1) === 1) {
    j = (j + 1) & 7;
    z--;
  }
  octant = j;
  return z * PI4;
}
