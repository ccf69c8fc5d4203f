/**
 * Proleptic Gregorian calendar arithmetic on plain integers (no `Date`), as Go's `time` package
 * does it: days since the Unix epoch <-> year/month/day, leap years, English names.
 */

export const SECONDS_PER_DAY = 86400;

export const LONG_MONTH_NAMES = [
  "January", "February", "March", "April", "May", "June",
  "July", "August", "September", "October", "November", "December",
] as const;
export const SHORT_MONTH_NAMES = [
  "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
] as const;
export const LONG_DAY_NAMES = [
  "Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday",
] as const;
export const SHORT_DAY_NAMES = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"] as const;

/** Days before the first of each month in a non-leap year; index 12 is 365. */
export const DAYS_BEFORE = [0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334, 365] as const;

export function isLeap(year: number): boolean {
  return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
}

/** Days in `month` (1..12) of `year`. */
export function daysIn(month: number, year: number): number {
  if (month === 2 && isLeap(year)) return 29;
  return DAYS_BEFORE[month]! - DAYS_BEFORE[month - 1]!;
}

/**
 * Days since 1970-01-01 of a civil date; month and day may be out of range and are normalised
 * the way Go's `time.Date` does (month 13 is January of the next year, day 0 the last of the
 * previous month).
 */
export function daysFromCivil(year: number, month: number, day: number): number {
  const m0 = month - 1;
  year += Math.floor(m0 / 12);
  const m = (((m0 % 12) + 12) % 12) + 1;
  // Howard Hinnant's days_from_civil, on the first of the month; the day is added linearly.
  const y = m <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const doy = Math.floor((153 * (m > 2 ? m - 3 : m + 9) + 2) / 5);
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146097 + doe - 719468 + day - 1;
}

/** Mutable scratch result of `civilFromDays` (one per caller, to avoid allocation). */
export interface Ymd {
  year: number;
  month: number;
  day: number;
}

/** Civil date of a day count since 1970-01-01, written into `out`. */
export function civilFromDays(days: number, out: Ymd): Ymd {
  const z = days + 719468;
  const era = Math.floor(z / 146097);
  const doe = z - era * 146097;
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36524) - Math.floor(doe / 146096)) / 365);
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  out.day = doy - Math.floor((153 * mp + 2) / 5) + 1;
  out.month = mp < 10 ? mp + 3 : mp - 9;
  out.year = yoe + era * 400 + (out.month <= 2 ? 1 : 0);
  return out;
}

/** Day of the week (0 = Sunday) of a day count since 1970-01-01 (a Thursday). */
export function weekdayOfDays(days: number): number {
  return (((days + 4) % 7) + 7) % 7;
}

/** Day of the year, 1..366. */
export function yearDay(year: number, month: number, day: number): number {
  return DAYS_BEFORE[month - 1]! + day + (month > 2 && isLeap(year) ? 1 : 0);
}
