/**
 * `floe run -C N` / `--timeout D` (like `mosquitto_sub -C` / `-W`): a live rule stops after N
 * results or after D, as if its input had ended, and exits 0. One AbortSignal says "stop": the
 * streaming runner stops its sources on it, and the standard-input reader ends on it.
 */
import { goDurationMs } from "../value/duration.ts";
import { UsageError } from "./options.ts";

export interface RunLimits {
  /** Aborted once the count is reached or the time is up. */
  readonly signal: AbortSignal;
  /** Standard output's writer, cut after the Nth line when -C is given. */
  readonly write: (text: string) => void;
  /** Clears the timer. */
  dispose(): void;
}

/** `--timeout` as a Go duration (`30s`, `1m30s`, `500ms`) or a number of seconds (`10`, as mosquitto_sub -W). */
export function parseTimeout(text: string): number {
  let ms: number;
  if (/^\d+(\.\d+)?$/.test(text)) ms = Number(text) * 1000;
  else {
    try {
      ms = goDurationMs(text);
    } catch {
      throw new UsageError(`--timeout must be a duration such as 30s, 1m or 500ms, or a number of seconds (got ${JSON.stringify(text)})`);
    }
  }
  if (!(ms > 0)) throw new UsageError(`--timeout must be greater than 0 (got ${JSON.stringify(text)})`);
  return ms;
}

/** `-C` as a positive whole number. */
export function parseCount(text: string): number {
  if (!/^[1-9]\d*$/.test(text)) throw new UsageError(`-C must be a whole number of results greater than 0 (got ${JSON.stringify(text)})`);
  return Number(text);
}

export function createRunLimits(write: (text: string) => void, count: number | undefined, timeoutMs: number | undefined): RunLimits {
  const stop = new AbortController();
  const timer = timeoutMs !== undefined ? setTimeout(() => stop.abort(), timeoutMs) : undefined;
  let left = count ?? Infinity;
  const limited = (text: string): void => {
    if (left <= 0) return;
    if (left === Infinity) return write(text);
    let cut = text.length;
    for (let i = text.indexOf("\n"); i >= 0; i = text.indexOf("\n", i + 1)) {
      if (--left === 0) {
        cut = i + 1;
        break;
      }
    }
    write(cut === text.length ? text : text.slice(0, cut));
    if (left === 0) stop.abort();
  };
  return { signal: stop.signal, write: count === undefined ? write : limited, dispose: () => clearTimeout(timer) };
}

/** The input batches until `signal` aborts, even while a read is waiting (`tail -f | floe run -C 1`). */
export async function* untilAborted(input: AsyncIterable<string[]>, signal: AbortSignal): AsyncIterable<string[]> {
  if (signal.aborted) return;
  const it = input[Symbol.asyncIterator]();
  const aborted = new Promise<IteratorResult<string[]>>((r) => signal.addEventListener("abort", () => r({ done: true, value: undefined }), { once: true }));
  for (;;) {
    const next = await Promise.race([it.next(), aborted]);
    if (next.done || signal.aborted) return;
    yield next.value;
  }
}
