/**
 * Trial runs (rest-api.md §8): a SELECT planned against the catalog, its results streamed as
 * Server-Sent Events on the data server (`source.httpServerIp:httpServerPort`, path `/test/<id>`).
 * Streams named in `mockSource` read its rows instead of their connector. Nothing touches the
 * rule store. A trial ends when deleted, at its first runtime error, or after 5 minutes.
 */
import { ErrCode, errorText } from "../errors.ts";
import type { RuleRun } from "../runtime/lifecycle.ts";
import type { MockSpec } from "./mock-source.ts";
import { isObject, field } from "./body.ts";
import type { Engine } from "./engine.ts";
import { errorBody, jsonSniffed, sentence } from "./respond.ts";
import type { RouteDef } from "./router.ts";

const TRIAL_TTL_MS = 5 * 60_000;

interface Trial {
  readonly id: string;
  readonly text: string;
  readonly mocks: Record<string, MockSpec>;
  readonly clients: Set<ReadableStreamDefaultController<Uint8Array>>;
  run: RuleRun | undefined;
  timer: ReturnType<typeof setTimeout> | undefined;
}

const trials = new Map<string, Trial>();
let dataServer: ReturnType<typeof Bun.serve> | undefined;
const enc = new TextEncoder();

/** Sends one sink output to every SSE client of trial `id` (the runtime's trial sink calls this). */
export function publishTrial(id: string, payload: string): void {
  const t = trials.get(id);
  if (!t) return;
  const chunk = enc.encode(`data: ${payload}\n\n`);
  for (const c of t.clients) {
    try {
      c.enqueue(chunk);
    } catch {
      t.clients.delete(c);
    }
  }
}

function ensureDataServer(e: Engine): void {
  if (dataServer) return;
  const { httpServerIp, httpServerPort } = e.config.source;
  dataServer = Bun.serve({
    hostname: httpServerIp,
    port: httpServerPort,
    idleTimeout: 0,
    fetch(req) {
      const path = new URL(req.url).pathname;
      const m = /^\/test\/([^/]+)$/.exec(path);
      const t = m ? trials.get(decodeURIComponent(m[1]!)) : undefined;
      if (!t) return new Response("404 page not found\n", { status: 404, headers: { "Content-Type": "text/plain; charset=utf-8" } });
      let ctl: ReadableStreamDefaultController<Uint8Array>;
      const stream = new ReadableStream<Uint8Array>({
        start(c) {
          ctl = c;
          t.clients.add(c);
          // eKuiper flushes the headers at once; Bun sends them with the first chunk, so the
          // stream opens with an SSE comment line, which clients ignore.
          c.enqueue(enc.encode(":\n\n"));
        },
        cancel() {
          t.clients.delete(ctl);
        },
      });
      return new Response(stream, { headers: { "Content-Type": "text/event-stream", "Cache-Control": "no-cache", Connection: "keep-alive", "Access-Control-Allow-Origin": "*" } });
    },
  });
}

async function stopTrial(id: string): Promise<void> {
  const t = trials.get(id);
  if (!t) return;
  trials.delete(id);
  if (t.timer) clearTimeout(t.timer);
  await t.run?.stop().catch(() => {});
  for (const c of t.clients) {
    try {
      c.close();
    } catch {
      // already closed
    }
  }
}

/** Stops every trial and the data server (daemon shutdown). */
export async function closeTrials(): Promise<void> {
  for (const id of [...trials.keys()]) await stopTrial(id);
  dataServer?.stop(true);
  dataServer = undefined;
}

/** The trial as a rule definition: its SQL, a trial sink, `sendError` forced on. */
function trialRule(id: string, body: Record<string, unknown>): string {
  const sinkProps = isObject(field(body, "sinkProps")) ? (field(body, "sinkProps") as Record<string, unknown>) : {};
  return JSON.stringify({ id, sql: field(body, "sql"), actions: [{ nop: sinkProps }], options: { sendError: true }, triggered: false });
}

export const ruletestRoutes: RouteDef<Engine>[] = [
  {
    method: "POST",
    path: "/ruletest",
    handler: async (ctx, e) => {
      const text = await ctx.text();
      let body: unknown;
      try {
        body = JSON.parse(text);
      } catch (err) {
        return errorBody(ErrCode.undefined, `fail to parse rule definition ${text} : ${errorText(err)}`);
      }
      if (!isObject(body)) return errorBody(ErrCode.undefined, `fail to parse rule definition ${text} : json: cannot unmarshal into Go value of type trial.RuleDef`);
      const id = String(field(body, "id") ?? "");
      try {
        const def = e.rules.parse(trialRule(id, body));
        e.rules.validateDef(def);
      } catch (err) {
        return errorBody(ErrCode.undefined, `fail to run rule ${id}: ${errorText(err)}`);
      }
      await stopTrial(id);
      ensureDataServer(e);
      const mocks = isObject(field(body, "mockSource")) ? (field(body, "mockSource") as Record<string, MockSpec>) : {};
      trials.set(id, { id, text: trialRule(id, body), mocks, clients: new Set(), run: undefined, timer: undefined });
      return jsonSniffed({ id, port: dataServer?.port ?? e.config.source.httpServerPort });
    },
  },
  {
    method: "POST",
    path: "/ruletest/{name}/start",
    handler: async (ctx, e) => {
      const id = ctx.params.name!;
      const t = trials.get(id);
      if (!t) return errorBody(ErrCode.undefined, `start rule error: try to start test rule ${id} but it is not found`);
      if (!t.run) {
        try {
          t.run = await e.trialRun(
            e.rules.parse(t.text),
            (payload) => publishTrial(id, payload),
            (exit) => {
              if (exit.kind === "error") {
                publishTrial(id, JSON.stringify({ error: exit.message }));
                void stopTrial(id);
              }
            },
            t.mocks,
          );
        } catch (err) {
          return errorBody(ErrCode.undefined, `start rule error: ${errorText(err)}`);
        }
        t.timer = setTimeout(() => void stopTrial(id), TRIAL_TTL_MS);
      }
      return sentence(`Test rule ${id} was started`);
    },
  },
  {
    method: "DELETE",
    path: "/ruletest/{name}",
    handler: async (ctx) => {
      await stopTrial(ctx.params.name!);
      return sentence(`Test rule ${ctx.params.name} was stopped.`);
    },
  },
];
