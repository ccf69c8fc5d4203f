/** Go's `math.Atan`, `Atan2`, `Asin` and `Acos` (Cephes atan.c, portable Go on every architecture). */

const P0 = -8.750608600031904122785e-1;
const P1 = -1.615753718733365076637e1;
const P2 = -7.50085579231470466734e1;
const P3 = -1.22886668449013617341e2;
const P4 = -6.485021904942025371773e1;
const Q0 = 2.485846490142306297962e1;
const Q1 = 1.650270098316988542046e2;
const Q2 = 4.328810604912902668951e2;
const Q3 = 4.853903996359136964868e2;
const Q4 = 1.945506571482613964425e2;
const MOREBITS = 6.12323399573676588613e-17; // π/2 = PIO2 + MOREBITS
const TAN3PIO8 = 2.4142135623730950488;
const PI2 = Math.PI / 2;
const PI4 = Math.PI / 4;
const PI3_4 = 2.356194490192345; // Go's constant 3*Pi/4, rounded once (JS 3 * Math.PI / 4 agrees)

/** atan of x in [0, 0.66]. */
function xatan(x: number): number {
  let z = x * x;
  z = (z * ((((P0 * z + P1) * z + P2) * z + P3) * z + P4)) / (((((z + Q0) * z + Q1) * z + Q2) * z + Q3) * z + Q4);
  return x * z + x;
}

/** atan of x >= 0, reduced to [0, 0.66]. */
function satan(x: number): number {
  if (x <= 0.66) return xatan(x);
  if (x > TAN3PIO8) return PI2 - xatan(1 / x) + MOREBITS;
  return PI4 + xatan((x - 1) / (x + 1)) + 0.5 * MOREBITS;
}

/** Go `math.Atan`. */
export function goAtan(x: number): number {
  if (x === 0) return x;
  return x > 0 ? satan(x) : -satan(-x);
}

/** Go `math.Asin`. */
export function goAsin(x: number): number {
  if (x === 0) return x;
  let neg = false;
  if (x < 0) {
    x = -x;
    neg = true;
  }
  if (x > 1) return NaN;
  let t = Math.sqrt(1 - x * x);
  t = x > 0.7 ? PI2 - satan(t / x) : satan(x / t);
  return neg ? -t : t;
}

/** Go `math.Acos`: π/2 - Asin(x). */
export function goAcos(x: number): number {
  return PI2 - goAsin(x);
}

function copysign(m: number, s: number): number {
  return s < 0 || Object.is(s, -0) ? -m : m;
}

/** Go `math.Atan2(y, x)`. */
export function goAtan2(y: number, x: number): number {
  if (Number.isNaN(y) || Number.isNaN(x)) return NaN;
  if (y === 0) return x >= 0 && !Object.is(x, -0) ? copysign(0, y) : copysign(Math.PI, y);
  if (x === 0) return copysign(PI2, y);
  if (!Number.isFinite(x)) {
    if (x > 0) return copysign(Number.isFinite(y) ? 0 : PI4, y);
    return copysign(Number.isFinite(y) ? Math.PI : PI3_4, y);
  }
  if (!Number.isFinite(y)) return copysign(PI2, y);
  const q = goAtan(y / x);
  if (x < 0) return q <= 0 ? q + Math.PI : q - Math.PI;
  return q;
}
