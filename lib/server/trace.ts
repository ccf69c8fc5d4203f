/**
 * Tracing routes (rest-api.md §15): the trace ids of a rule and one trace's span tree from the
 * local store, and `POST /tracer`, which switches OTLP export to a collector on or off (a collector
 * the outbound client refuses — loopback/private without `basic.enablePrivateNet` — is a 400 and
 * changes nothing). Starting and stopping a rule's tracing is a rule route (rules.ts, §5).
 */
import { ErrCode } from "../errors.ts";
import { refusalOf } from "../net/guard.ts";
import { tracesUrl } from "../runtime/trace/otlp.ts";
import { isObject, readJson } from "./body.ts";
import type { Engine } from "./engine.ts";
import { errorBody, json, sentence } from "./respond.ts";
import type { RouteDef } from "./router.ts";

type R = RouteDef<Engine>;

export const traceRoutes: R[] = [
  {
    method: "GET",
    path: "/trace/{id}",
    handler: async (ctx, e) => {
      const tree = await e.traces.store.tree(ctx.params.id!);
      if (!tree) return new Response("Not Found\n", { status: 404, headers: { "Content-Type": "text/plain; charset=utf-8" } });
      return json(tree);
    },
  },
  {
    method: "GET",
    path: "/trace/rule/{ruleID}",
    handler: async (ctx, e) => {
      // `limit` ≤ 0 or unparsable: all (eKuiper reads it as 0).
      const raw = ctx.query.get("limit") ?? "";
      const limit = /^\s*[+-]?\d+\s*$/.test(raw) ? Number(raw) : 0;
      // eKuiper's handler panics on a rule without traces; floe answers the empty list (§15).
      return json(await e.traces.store.traceIds(ctx.params.ruleID!, limit));
    },
  },
  {
    method: "POST",
    path: "/tracer",
    handler: async (ctx, e) => {
      const b = await readJson(ctx);
      if (!b.ok) return errorBody(ErrCode.undefined, `Invalid body: Error decoding json: ${b.error}`);
      const v = isObject(b.value) ? b.value : {};
      const str = (k: string) => (typeof v[k] === "string" ? (v[k] as string) : "");
      const ot = e.config.openTelemetry;
      const start = str("action") === "start";
      const collector = str("collector_url") || ot.remoteEndpoint;
      const refused = start ? await refusalOf(tracesUrl(collector), e.outbound) : undefined;
      if (refused) return errorBody(ErrCode.undefined, `collector_url ${collector}: ${refused.message}`);
      e.traces.setRemote(start, collector, str("service_name") || ot.serviceName);
      return sentence("success");
    },
  },
];
