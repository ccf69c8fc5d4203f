/**
 * Parsing a date-time string with no known layout (functions §7.2): eKuiper hands the string to
 * `jinzhu/now`, which tries a list of Go layouts in order and then fills missing date parts from
 * the current time. Returns the instant as Unix seconds + nanoseconds + zone.
 */
import { civilFromDays, daysFromCivil, type Ymd } from "./civil.ts";
import { compileLayout, type Layout } from "./layout.ts";
import { parseLayout, type Parsed } from "./layout-parse.ts";
import { zonedUnix, type Zone } from "./zones.ts";

/** jinzhu/now's layouts, then eKuiper's JS ISO and plain ISO 8601 layouts (compiled at the first parse, to keep start-up short). */
const DEFAULT_LAYOUT_TEXTS: string[] = [
  "2006", "2006-1", "2006-1-2", "2006-1-2 15", "2006-1-2 15:4", "2006-1-2 15:4:5", "1-2",
  "15:4:5", "15:4", "15",
  "15:4:5 Jan 2, 2006 MST", "2006-01-02 15:04:05.999999999 -0700 MST", "2006-01-02T15:04:05Z0700",
  "2006-01-02T15:04:05Z07",
  "2006.1.2", "2006.1.2 15:04:05", "2006.01.02", "2006.01.02 15:04:05", "2006.01.02 15:04:05.999999999",
  "1/2/2006", "1/2/2006 15:4:5", "2006/01/02", "20060102", "2006/01/02 15:04:05",
  "Mon Jan _2 15:04:05 2006", "Mon Jan _2 15:04:05 MST 2006", "Mon Jan 02 15:04:05 -0700 2006",
  "02 Jan 06 15:04 MST", "02 Jan 06 15:04 -0700", "Monday, 02-Jan-06 15:04:05 MST",
  "Mon, 02 Jan 2006 15:04:05 MST", "Mon, 02 Jan 2006 15:04:05 -0700",
  "2006-01-02T15:04:05Z07:00", "2006-01-02T15:04:05.999999999Z07:00", "3:04PM", "Jan _2 15:04:05",
  "Jan _2 15:04:05.000", "Jan _2 15:04:05.000000", "Jan _2 15:04:05.000000000",
  "2006-01-02T15:04:05.000Z07:00", "2006-01-02T15:04:05",
];
let defaultLayouts: Layout[] | undefined;

// jinzhu/now's detectors (Go RE2 `\s` is ASCII white space).
const HAS_TIME = /([\t\n\f\r ]+|^[\t\n\f\r ]*|T)\d{1,2}((:\d{1,2})*|((:\d{1,2}){2}\.(\d{3}|\d{6}|\d{9})))([\t\n\f\r ]*$|[Z+-])/;
const HAS_TIME_ALL = new RegExp(HAS_TIME.source, "g");
const ONLY_TIME = /^[\t\n\f\r ]*\d{1,2}((:\d{1,2})*|((:\d{1,2}){2}\.(\d{3}|\d{6}|\d{9})))[\t\n\f\r ]*$/;
const FRACTION = /(:\d{1,2})\.(\d+)/;

/** Pads a seconds fraction to 3, 6 or 9 digits and cuts it beyond 9. */
function normaliseFraction(s: string): string {
  const m = FRACTION.exec(s);
  if (!m) return s;
  const digits = m[2]!;
  const len = digits.length;
  const want = len <= 3 ? 3 : len <= 6 ? 6 : 9;
  if (len === want) return s;
  const fixed = len > 9 ? digits.slice(0, 9) : digits.padEnd(want, "0");
  return s.slice(0, m.index) + m[1] + "." + fixed + s.slice(m.index + m[0].length);
}

const ymd: Ymd = { year: 0, month: 0, day: 0 };

/** [ns, sec, min, hour, day, month, year] of an instant in `zone` (jinzhu's formatTimeToList). */
function fields(sec: number, nsec: number, zone: Zone): number[] {
  const local = sec + zone.offsetAt(sec * 1000);
  const days = Math.floor(local / 86400);
  const sod = local - days * 86400;
  civilFromDays(days, ymd);
  return [nsec, sod % 60, Math.floor((sod % 3600) / 60), Math.floor(sod / 3600), ymd.day, ymd.month, ymd.year];
}

/**
 * jinzhu/now `Parse` of one string in `zone`, `first` (a translated pattern) tried before the
 * defaults, the current time `nowMs` filling what the string leaves out. Undefined on failure.
 */
export function parseDateString(input: string, zone: Zone, first: Layout | undefined, nowMs: number): Parsed | undefined {
  const str = normaliseFraction(input);
  let t: Parsed | undefined = first ? parseLayout(first, str, zone) : undefined;
  const layouts = (defaultLayouts ??= DEFAULT_LAYOUT_TEXTS.map(compileLayout));
  for (let i = 0; !t && i < layouts.length; i++) t = parseLayout(layouts[i]!, str, zone);
  if (!t) return undefined;
  const hasTime = HAS_TIME.test(str);
  const onlyTime = hasTime && ONLY_TIME.test(str) && str.replace(HAS_TIME_ALL, "") === "";
  const nowSec = Math.floor(nowMs / 1000);
  const current = fields(nowSec, (nowMs - nowSec * 1000) * 1_000_000, zone);
  const p = fields(t.sec, t.nsec, t.zone);
  let setCurrent = false;
  for (let i = 0; i < p.length; i++) {
    // Hour, minute, second and fraction are kept when the string has a time of day.
    if (hasTime && i <= 3) continue;
    if (p[i] === 0) {
      if (setCurrent) p[i] = current[i]!;
    } else {
      setCurrent = true;
    }
    if (onlyTime && (i === 4 || i === 5)) p[i] = current[i]!;
  }
  const days = daysFromCivil(p[6]!, p[5]!, p[4]!);
  const nsec = p[0]!;
  return { sec: zonedUnix(days, p[3]! * 3600 + p[2]! * 60 + p[1]!, t.zone), nsec, zone: t.zone };
}
