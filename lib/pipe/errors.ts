/**
 * Pipe mode's error report (pipe-mode.md): decode errors and row errors go to standard error, the
 * first `limit` in full with where the record came from (`line 12`, `source demo, topic a/b`), then
 * at most one line per second counting the rest; every error is counted. Both pipe runners (the
 * file/replay runner and the streaming one) report through one instance; nothing here runs unless
 * an error happened.
 */
import type { ErrorReport } from "../runtime/error-report.ts";

/** Errors shown in full before the report switches to counts. */
export const ERRORS_IN_FULL = 10;

export class PipeErrors implements ErrorReport {
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

  constructor(
    private readonly write: (text: string) => void,
    private readonly limit = ERRORS_IN_FULL,
    private readonly intervalMs = 1000,
  ) {}

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
    this.write(`floe: the rule stopped by error: ${message}\n`);
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
    if (total > this.shown) this.write(`floe: ${this.shown} of ${total} errors shown in full\n`);
  }

  private report(where: string, message: string): void {
    const text = where ? `${where}: ${message}` : message;
    if (this.shown < this.limit) {
      this.shown++;
      this.write(`floe: ${text}\n`);
      return;
    }
    this.pending++;
    this.last = text;
    if (!this.timer) {
      this.timer = setTimeout(this.tick, this.intervalMs);
      // A pending count line never keeps the process alive: end() prints it.
      (this.timer as { unref?(): void }).unref?.();
    }
  }

  private readonly tick = (): void => {
    this.timer = undefined;
    this.flushPending(" in the last second");
  };

  private flushPending(span: string): void {
    if (this.pending === 0) return;
    this.write(`floe: ${this.pending} more error(s)${span} (last: ${this.last})\n`);
    this.pending = 0;
    this.last = "";
  }
}
