/**
 * Plans a graph rule in the runtime's environment (graph-rules.md §2): source types and sink
 * provisioning are checked against the connector registries, as eKuiper does at create.
 */
import { createSinkConnector } from "../connectors/sinks.ts";
import { parseSinkCommon } from "../sink/common.ts";
import { checkSinkFormat } from "../sink/payload.ts";
import { checkFormat } from "../formats/schema-registry.ts";
import { isByteSource, SOURCE_NODE_TYPES, sourceType } from "../connectors/sources.ts";
import { planGraph, type GraphPlan } from "../plan/graph.ts";
import { planOptions, type RuleOptions } from "../plan/rule-options.ts";
import type { StreamDef } from "../plan/streams.ts";
import { parseSelect } from "../sql/parse.ts";
import { createFunctionRegistry } from "../functions/index.ts";
import type { RuntimeEnv } from "./env.ts";

/** The SELECT a graph rule carries where the runtime wants one (it is never planned). */
export const GRAPH_SELECT = parseSelect("SELECT * FROM graph", createFunctionRegistry());

export function planRuleGraph(
  id: string,
  json: unknown,
  temp: boolean,
  streams: ReadonlyMap<string, StreamDef>,
  o: RuleOptions,
  env: RuntimeEnv,
  now: () => number,
  decoder: (def: StreamDef) => boolean,
  startedAt = now(),
): GraphPlan {
  const plan = planGraph(
    json,
    streams,
    { env: { now, zone: env.zone, ruleId: id, ruleStart: startedAt }, functions: env.functions, zone: env.zone, ignoreCase: env.ignoreCase, ...planOptions(o), decoder },
    {
      temp,
      useSliceTuple: o.useSliceTuple,
      sourceTypeExists: (t) => SOURCE_NODE_TYPES.has(t),
      checkSink: (t, p) => {
        if (createSinkConnector(t, p, env).bytes) checkSinkFormat(parseSinkCommon(p, env.cacheDefaults), env.schemas);
      },
    },
  );
  // A source node's protobuf SCHEMAID must resolve at create, as a stream's does (CREATE STREAM).
  for (const src of plan.sources) if (isByteSource(sourceType(src.def))) checkFormat(env.schemas, src.def.options.FORMAT, src.def.options.SCHEMAID);
  return plan;
}
