/**
 * Standard 5-field cron (robfig/cron's parser as eKuiper uses it, rules-and-sinks.md §7):
 * minute hour day-of-month month day-of-week with `*`, `?`, lists, ranges, steps, month and day
 * names, descriptors (`@hourly` …) and `@every <duration>`. Evaluated in a zone.
 */
import { EngineError, ErrCode } from "../errors.ts";
import { goDurationMs } from "../value/duration.ts";
import type { Zone } from "../value/time.ts";

export interface Schedule {
  /** The first fire time strictly after `ms` (epoch ms), or undefined when there is none. */
  next(ms: number): number | undefined;
}

const MONTHS = ["JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"];
const DAYS = ["SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"];
const DESCRIPTORS: Record<string, string> = {
  "@yearly": "0 0 1 1 *",
  "@annually": "0 0 1 1 *",
  "@monthly": "0 0 1 * *",
  "@weekly": "0 0 * * 0",
  "@daily": "0 0 * * *",
  "@midnight": "0 0 * * *",
  "@hourly": "0 * * * *",
};

function parseField(text: string, min: number, max: number, names?: string[]): { set: Set<number>; star: boolean } {
  const set = new Set<number>();
  let star = false;
  const value = (s: string): number => {
    const up = s.toUpperCase();
    if (names) {
      const i = names.indexOf(up);
      if (i >= 0) return i + (min === 1 ? 1 : 0);
    }
    if (!/^\d+$/.test(s)) throw new EngineError(`failed to parse int from ${s}`, ErrCode.undefined);
    return Number(s);
  };
  for (const part of text.split(",")) {
    const [range, stepText] = part.split("/") as [string, string | undefined];
    let lo: number;
    let hi: number;
    if (range === "*" || range === "?") {
      lo = min;
      hi = max;
      if (stepText === undefined) star = true;
    } else if (range.includes("-")) {
      const [a, b] = range.split("-") as [string, string];
      lo = value(a);
      hi = value(b);
    } else {
      lo = value(range);
      hi = stepText !== undefined ? max : lo;
    }
    const step = stepText !== undefined ? Number(stepText) : 1;
    if (!(step > 0) || lo < min || hi > max || lo > hi) throw new EngineError(`end of range (${hi}) above maximum (${max}): ${part}`, ErrCode.undefined);
    for (let v = lo; v <= hi; v += step) set.add(v === 7 && max === 7 ? 0 : v);
  }
  return { set, star };
}

class SpecSchedule implements Schedule {
  constructor(
    private readonly minute: Set<number>,
    private readonly hour: Set<number>,
    private readonly dom: { set: Set<number>; star: boolean },
    private readonly month: Set<number>,
    private readonly dow: { set: Set<number>; star: boolean },
    private readonly zone: Zone,
  ) {}

  private dayMatches(d: Date): boolean {
    const domOk = this.dom.set.has(d.getUTCDate());
    const dowOk = this.dow.set.has(d.getUTCDay());
    // robfig: when either field is `*`, both must match (AND); otherwise either (OR).
    if (this.dom.star || this.dow.star) return domOk && dowOk;
    return domOk || dowOk;
  }

  next(ms: number): number | undefined {
    // Work on "local wall time as if UTC", then map back through the zone offset.
    const off = this.zone.offsetAt(ms) * 1000;
    let t = Math.floor((ms + off) / 60000) * 60000 + 60000;
    const limit = t + 5 * 366 * 86400_000;
    while (t < limit) {
      const d = new Date(t);
      if (!this.month.has(d.getUTCMonth() + 1)) {
        t = Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
        continue;
      }
      if (!this.dayMatches(d)) {
        t = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate() + 1);
        continue;
      }
      if (!this.hour.has(d.getUTCHours())) {
        t = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate(), d.getUTCHours() + 1);
        continue;
      }
      if (!this.minute.has(d.getUTCMinutes())) {
        t += 60000;
        continue;
      }
      const utc = t - this.zone.offsetAt(t - off) * 1000;
      if (utc > ms) return utc;
      t += 60000;
    }
    return undefined;
  }
}

class EverySchedule implements Schedule {
  constructor(private readonly ms: number) {}
  next(ms: number): number {
    return Math.floor(ms / 1000) * 1000 + Math.max(1000, Math.floor(this.ms / 1000) * 1000);
  }
}

/** Parses a cron expression; errors are code 1000 with a robfig-style text. */
export function parseCron(expr: string, zone: Zone): Schedule {
  let text = expr.trim();
  if (text.startsWith("@every ")) {
    return new EverySchedule(goDurationMs(text.slice(7).trim()));
  }
  if (text.startsWith("@")) {
    const d = DESCRIPTORS[text.toLowerCase()];
    if (!d) throw new EngineError(`unrecognized descriptor: ${text}`, ErrCode.undefined);
    text = d;
  }
  const f = text.split(/\s+/);
  if (f.length !== 5) throw new EngineError(`expected exactly 5 fields, found ${f.length}: [${f.join(" ")}]`, ErrCode.undefined);
  return new SpecSchedule(
    parseField(f[0]!, 0, 59).set,
    parseField(f[1]!, 0, 23).set,
    parseField(f[2]!, 1, 31),
    parseField(f[3]!, 1, 12, MONTHS).set,
    parseField(f[4]!, 0, 7, DAYS),
    zone,
  );
}
