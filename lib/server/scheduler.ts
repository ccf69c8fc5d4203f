/**
 * The patrol tick (rules-and-sinks.md §6–§7): every `rulePatrolInterval` it applies schedules
 * (`cronDatetimeRange`, `cron` + `duration`, `duration` alone) and the restart strategy. Unlike
 * eKuiper (documented quirk) a rule the user stopped (`triggered=false`) is never schedule-started.
 */
import type { Zone } from "../value/time.ts";
import type { StoredRule } from "../store/stored-rule.ts";
import { parseCron, type Schedule } from "./cron.ts";
import { isScheduled, RuleLifecycle, RuleStateName } from "./lifecycle.ts";
import type { DatetimeRange } from "../plan/rule-options.ts";

const cronCache = new Map<string, Schedule | null>();

function schedule(expr: string, zone: Zone): Schedule | null {
  const key = zone.name + "\u0000" + expr;
  let s = cronCache.get(key);
  if (s === undefined) {
    try {
      s = parseCron(expr, zone);
    } catch {
      s = null;
    }
    if (cronCache.size > 1000) cronCache.clear();
    cronCache.set(key, s);
  }
  return s;
}

/** `2006-01-02 15:04:05` in `zone` → epoch ms. */
function localMs(text: string, zone: Zone): number {
  const m = /^(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})$/.exec(text);
  if (!m) return NaN;
  const wall = Date.UTC(+m[1]!, +m[2]! - 1, +m[3]!, +m[4]!, +m[5]!, +m[6]!);
  return wall - zone.offsetAt(wall - zone.offsetAt(wall) * 1000) * 1000;
}

function inRange(r: DatetimeRange, now: number, zone: Zone): boolean {
  if (r.beginTimestamp > 0 && r.endTimestamp > 0) return r.beginTimestamp < now && now < r.endTimestamp;
  return localMs(r.begin, zone) < now && now < localMs(r.end, zone);
}

/** Whether a cron+duration rule should be running at `now`. */
function inCronWindow(def: StoredRule, now: number, zone: Zone): boolean {
  const s = schedule(def.options.cron, zone);
  const d = def.options.durationMs;
  if (!s || d <= 0) return false;
  const prev = s.next(now - d - 1);
  return prev !== undefined && prev <= now && now < prev + d;
}

/** Whether a scheduled rule is inside its schedule at `now` (always true for other rules). */
export function inSchedule(def: StoredRule, now: number, zone: Zone): boolean {
  const o = def.options;
  if (o.cronDatetimeRange.length && !o.cronDatetimeRange.some((r) => inRange(r, now, zone))) return false;
  if (o.cron !== "" && o.duration !== "") return inCronWindow(def, now, zone);
  return true;
}

/** `nextStartTimestamp` of the status (rules-and-sinks.md §7). */
export function nextStartTimestamp(def: StoredRule, now: number, zone: Zone): number {
  const o = def.options;
  if (!isScheduled(def) || o.cron === "") return 0;
  if (o.cronDatetimeRange.length && !o.cronDatetimeRange.some((r) => inRange(r, now, zone))) return 0;
  return schedule(o.cron, zone)?.next(now) ?? 0;
}

/** One patrol tick over every rule with runtime state. */
export function patrol(rules: Iterable<RuleLifecycle>, now: number, zone: Zone, restart: (r: RuleLifecycle) => void): void {
  for (const r of rules) {
    const def = r.def;
    const o = def.options;
    if (r.state === RuleStateName.stoppedByErr && o.restartStrategy.attempts > 0 && def.triggered) {
      restart(r);
      continue;
    }
    if (o.cronDatetimeRange.length && !o.cronDatetimeRange.some((x) => inRange(x, now, zone))) {
      void r.scheduleStop("schedule terminated");
      continue;
    }
    const cron = o.cron !== "";
    const dur = o.duration !== "";
    if (cron && dur) {
      if (inCronWindow(def, now, zone)) {
        if (def.triggered && r.state !== RuleStateName.running) void r.scheduleStart();
      } else if (r.state === RuleStateName.running) void r.scheduleStop("schedule terminated");
      else if (r.state === RuleStateName.stopped && def.triggered) void r.scheduleStop("", RuleStateName.scheduledStop);
    } else if (dur) {
      if (r.running && now - r.lastStartTimestamp >= o.durationMs) void r.scheduleStop("duration terminated", RuleStateName.stopped);
    } else if (o.cronDatetimeRange.length && def.triggered && r.state === RuleStateName.scheduledStop) {
      void r.scheduleStart();
    }
  }
}
