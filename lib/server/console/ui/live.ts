/** The one live stream of the page: `/ui/events` (with `?rule=` on a rule's page), reconnected on failure. */
import { readEvents } from "./api.ts";
import type { Sample, TotalsPoint } from "./types.ts";

const HISTORY = 600;

export const live = {
  history: [] as TotalsPoint[],
  last: undefined as Sample | undefined,
  listener: undefined as ((s: Sample) => void) | undefined,
};

let ctl: AbortController | undefined;
let current = "";

/** Closes the stream (a new token: the next `connect` opens it again). */
export function disconnect(): void {
  ctl?.abort();
  ctl = undefined;
}

/** Opens the stream for `rule` (or none); a stream already open for it is kept. */
export function connect(rule: string, onState: (on: boolean) => void): void {
  if (ctl && current === rule) return;
  ctl?.abort();
  const c = (ctl = new AbortController());
  current = rule;
  const url = "/ui/events" + (rule ? `?rule=${encodeURIComponent(rule)}` : "");
  const run = async () => {
    while (!c.signal.aborted) {
      try {
        await readEvents(url, c.signal, (event, data) => {
          onState(true);
          if (event === "history") live.history = JSON.parse(data) as TotalsPoint[];
          else if (event === "sample") {
            const smp = JSON.parse(data) as Sample;
            if (!live.history.length || live.history[live.history.length - 1]!.t !== smp.totals.t) live.history.push(smp.totals);
            if (live.history.length > HISTORY) live.history.splice(0, live.history.length - HISTORY);
            live.last = smp;
            live.listener?.(smp);
          }
        });
      } catch {
        // aborted, or the daemon went away: retry below
      }
      onState(false);
      if (!c.signal.aborted) await new Promise((r) => setTimeout(r, 2000));
    }
  };
  void run();
}
