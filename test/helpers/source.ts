/**
 * Drives one source connector against a real bus with one blocking subscriber: what it admitted,
 * its exceptions and whether it reached EOF; and the `floe run` CLI for end-to-end source tests.
 */
import { join } from "node:path";
import type { Obj } from "../../lib/value/values.ts";
import { ConnectionReporter } from "../../lib/core/connection.ts";
import type { SourceMessage } from "../../lib/source/message.ts";
import type { SourceConnector, SourceContext } from "../../lib/source/connector.ts";
import { Bus, type Subscription } from "../../lib/core/bus.ts";

export interface SourceProbe {
  readonly bus: Bus<SourceMessage>;
  readonly sub: Subscription<SourceMessage>;
  readonly ctx: SourceContext;
  readonly exceptions: string[];
  readonly eof: () => boolean;
  /** Takes what the subscription holds. */
  take(max?: number): SourceMessage[];
}

export function probe(capacity = 4096): SourceProbe {
  const bus = new Bus<SourceMessage>();
  const sub = bus.subscribe(capacity, "block", () => {});
  const exceptions: string[] = [];
  let ended = false;
  const ctx: SourceContext = {
    bus,
    status: new ConnectionReporter(),
    ref: "r_s_0",
    exception: (m) => void exceptions.push(m),
    fail: (e) => void exceptions.push(e instanceof Error ? e.message : String(e)),
    duplicates: () => {},
    eof: () => void (ended = true),
    log: () => {},
  };
  return {
    bus,
    sub,
    ctx,
    exceptions,
    eof: () => ended,
    take(max = Infinity) {
      const out: SourceMessage[] = [];
      sub.take(out, max === Infinity ? sub.length : max);
      return out;
    },
  };
}

/** The rows of tuple messages (payloads decoded as JSON text for byte messages). */
export function rowsOf(msgs: SourceMessage[]): Obj[] {
  const out: Obj[] = [];
  const dec = new TextDecoder();
  for (const m of msgs) {
    if (m.payload) out.push(JSON.parse(dec.decode(m.payload)) as Obj);
    else if (Array.isArray(m.rows)) out.push(...m.rows);
    else if (m.rows) out.push(m.rows);
  }
  return out;
}

/** Opens `src` on a probe and returns both. */
export async function openOn(src: SourceConnector, capacity?: number): Promise<SourceProbe> {
  const p = probe(capacity);
  await src.open(p.ctx);
  return p;
}

const root = join(import.meta.dir, "../..");

/** Spawns `floe run <args>` in `cwd`. */
export function floeRun(args: string[], cwd: string, env: Record<string, string> = {}) {
  return Bun.spawn([process.execPath, join(root, "cli.ts"), "run", ...args], {
    cwd,
    env: { ...process.env, ...env },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
}

export async function text(s: ReadableStream<Uint8Array> | number | undefined): Promise<string> {
  return s instanceof ReadableStream ? new Response(s).text() : "";
}
