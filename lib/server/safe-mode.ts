/**
 * A safe start: a rule or a UDF that hangs or crashes the daemon at start must not make
 * it unrecoverable. In safe mode the daemon serves REST but starts no rule and loads no UDF
 * script, so both can be inspected and deleted. It is entered with `floe serve --safe`, or by
 * itself after `after` starts in a row that did not stay up for `stableMs`: a marker file in the
 * data dir counts the starts; it is removed once the daemon has run for `stableMs`, and at a
 * graceful stop.
 */
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/** Starts in a row that ended early before the daemon starts in safe mode by itself. */
export const DEFAULT_SAFE_AFTER = 3;
/** How long a start must last to count as a good one. */
export const STABLE_MS = 30_000;
/** The marker's name in the data dir. */
export const MARKER = "unstable-starts";

export interface SafeMode {
  readonly on: boolean;
  /** Why (empty when off). */
  readonly reason: string;
}

export interface StartGuard {
  readonly mode: SafeMode;
  /** A graceful stop: this start was not a crash. */
  clean(): void;
}

export interface StartGuardOptions {
  readonly dataDir: string;
  /** `--safe` was given. */
  readonly flag: boolean;
  /** Early ends in a row that turn safe mode on; 0 never does. */
  readonly after?: number;
  readonly stableMs?: number;
}

/** Counts this start in the marker and decides the mode; call before any rule or script loads. */
export function guardStart(o: StartGuardOptions): StartGuard {
  const after = o.after ?? DEFAULT_SAFE_AFTER;
  const stableMs = o.stableMs ?? STABLE_MS;
  const file = join(o.dataDir, MARKER);
  let early = 0;
  try {
    early = Number.parseInt(readFileSync(file, "utf8").trim(), 10) || 0;
  } catch {
    // no marker: the last start was a good one
  }
  let reason = "";
  if (o.flag) reason = "started with --safe";
  else if (after > 0 && early >= after)
    reason = `the last ${early} starts ended within ${Math.round(stableMs / 1000)} s (a crash or a hang at start); fix or delete the rule or UDF, then restart (the count is in ${file})`;
  try {
    writeFileSync(file, `${early + 1}\n`);
  } catch {
    // a read-only data dir fails later, with a clearer message
  }
  const reset = () => rmSync(file, { force: true });
  const timer = setTimeout(reset, stableMs);
  timer.unref();
  return {
    mode: { on: reason !== "", reason },
    clean: () => {
      clearTimeout(timer);
      reset();
    },
  };
}
