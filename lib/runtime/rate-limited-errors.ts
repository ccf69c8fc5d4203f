/**
 * The rate-limited error report of a rule run, one mechanism for both hosts: pipe mode writes it
 * to standard error (pipe-mode.md), the daemon to its log. Decode errors and row errors are shown
 * in full (the first `limit`, with where the record came from: `line 12`, `source demo, topic a/b`),
 * then at most one line per interval counts the rest; every error is counted. Nothing here runs
 * unless an error happened.
 */
import type { ErrorReport } from "./error-report.ts";

/** Errors shown in full before the report switches to counts. */
export const ERRORS_IN_FULL = 10;

export interface ErrorReportOptions {
  /** Starts every line: `floe: ` on pipe mode's stderr, `rule r1: ` in the daemon's log. */
  readonly prefix?: string;
  readonly limit?: number;
  readonly intervalMs?: number;
  /** Whether the failure that stopped the rule is written here (the daemon logs its rule states itself). */
  readonly reportFatal?: boolean;
  /** Whether `end()` says how many errors were shown in full (pipe mode's last line). */
  readonly summary?: boolean;
  /** Whether `where` names the MQTT topic: the run then keeps every record's metadata. */
  readonly wantsMeta?: boolean;
}

export class RateLimitedErrors implements ErrorReport {
  /** Records the source could not decode (or that failed the stream schema). */
  decodeErrors = 0;
  /** Records (or window emissions) an operator failed on. */
  rowErrors = 0;
  /** The message of the failure that stopped the rule, if one did. */
  fatalMessage: string | undefined;
  private shown = 0;
  /** Errors since the last count line, and the last of them. */
  private pending = 0;
  private last = "";
  private timer: ReturnType<typeof setTimeout> | undefined;

  private readonly prefix: string;
  private readonly limit: number;
  private readonly intervalMs: number;
  private readonly reportFatal: boolean;
  private readonly summary: boolean;
  readonly wantsMeta: boolean;

  /** `write` takes whole lines, newline included. */
  constructor(
    private readonly write: (text: string) => void,
    o: ErrorReportOptions = {},
  ) {
    this.prefix = o.prefix ?? "floe: ";
    this.limit = o.limit ?? ERRORS_IN_FULL;
    this.intervalMs = o.intervalMs ?? 1000;
    this.reportFatal = o.reportFatal ?? true;
    this.summary = o.summary ?? true;
    this.wantsMeta = o.wantsMeta ?? true;
  }

  /** A record that did not decode; `where` locates it (`line 3`), or is empty. */
  decode(where: string, message: string): void {
    this.decodeErrors++;
    this.report(where, message);
  }

  /** An operator failed on a record; `where` locates the record being processed, or is empty. */
  row(where: string, message: string): void {
    this.rowErrors++;
    this.report(where, message);
  }

  /** The rule stopped by error: reported at once, never rate-limited. */
  fatal(message: string): void {
    if (this.fatalMessage !== undefined) return;
    this.fatalMessage = message;
    this.flushPending("");
    if (this.reportFatal) this.write(`${this.prefix}the rule stopped by error: ${message}\n`);
  }

  get total(): number {
    return this.decodeErrors + this.rowErrors;
  }

  /** Ends the report: the errors not yet counted on stderr, then how many were shown in full. */
  end(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.flushPending("");
    const total = this.total;
    if (this.summary && total > this.shown) this.write(`${this.prefix}${this.shown} of ${total} errors shown in full\n`);
  }

  private report(where: string, message: string): void {
    const text = where ? `${where}: ${message}` : message;
    if (this.shown < this.limit) {
      this.shown++;
      this.write(`${this.prefix}${text}\n`);
      return;
    }
    this.pending++;
    this.last = text;
    if (!this.timer) {
      this.timer = setTimeout(tickLater, this.intervalMs, this);
      // A pending count line never keeps the process alive: end() prints it.
      (this.timer as { unref?(): void }).unref?.();
    }
  }

  /** The interval after the first pending error ended: its count line. */
  tick(): void {
    this.timer = undefined;
    this.flushPending(this.intervalMs <= 1000 ? " in the last second" : ` in the last ${this.intervalMs / 1000} s`);
  }

  private flushPending(span: string): void {
    if (this.pending === 0) return;
    this.write(`${this.prefix}${this.pending} more error(s)${span} (last: ${this.last})\n`);
    this.pending = 0;
    this.last = "";
  }
}

/** A report's count line at the end of its interval (one function for every report: none holds a closure of its own). */
function tickLater(r: RateLimitedErrors): void {
  r.tick();
}
