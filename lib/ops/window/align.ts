/** `alignedEnd(now, k, unit)` (windows §3.2): where the first window of a time window ends. */
import { civil, DateTime, type Zone } from "../../value/time.ts";
import { zonedUnix } from "../../value/zones.ts";
import { daysFromCivil } from "../../value/civil.ts";
import type { TimeUnit } from "../../sql/ast.ts";

/** g = k, or k·(c/k + 1) when the component c exceeds k [quirk: c === k gives the current unit's start]. */
function step(c: number, k: number): number {
  return c > k ? k * (Math.floor(c / k) + 1) : k;
}

export function alignedEnd(now: number, k: number, unit: TimeUnit, zone: Zone): number {
  const c = civil(new DateTime(now, 0, zone));
  const days = daysFromCivil(c.year, c.month, c.day);
  const dayStart = zonedUnix(days, 0, zone) * 1000;
  switch (unit) {
    case "DD":
      return zonedUnix(days + k, 0, zone) * 1000;
    case "HH":
      return dayStart + step(c.hour, k) * 3_600_000;
    case "MI":
      return zonedUnix(days, c.hour * 3600, zone) * 1000 + step(c.minute, k) * 60_000;
    case "SS":
      return zonedUnix(days, c.hour * 3600 + c.minute * 60, zone) * 1000 + step(c.second, k) * 1000;
    case "MS": {
      const secStart = now - (((now % 1000) + 1000) % 1000);
      return secStart + step(now - secStart, k);
    }
  }
}
