/**
 * Source nodes of a graph rule (graph-rules.md §4): a node that names a created stream or table
 * (`sourceName`) checked against it, or a stream defined by the node's own props; then its
 * helpers (decoder, preprocessor) numbered as a SQL rule's (§8).
 */
import type { NodeDef } from "./graph-doc.ts";
import { prop, propBool, propInt, propString } from "./graph-props.ts";
import type { PlanOptions } from "./plan.ts";
import type { OpSpec, SourcePlan } from "./specs.ts";
import type { StreamDef } from "./streams.ts";

export interface GraphSource extends SourcePlan {
  /** Graph node name; its downstream graph nodes. */
  readonly node: string;
  readonly outs: string[];
}

/** What the host knows about sources that plan/ may not import: the connector registry. */
export interface SourceHost {
  readonly sourceTypeExists?: (type: string) => boolean;
  readonly temp?: boolean;
}

/** The stream or table a source node reads; throws the plain cause (the caller wraps it). */
export function sourceDef(n: NodeDef, streams: ReadonlyMap<string, StreamDef>, opts: PlanOptions, host: SourceHost): StreamDef {
  const p = n.props;
  const sourceName = propString(p, "sourceName");
  if (sourceName) {
    const kind = propString(p, "sourceType") || "stream";
    if (kind !== "stream" && kind !== "table") throw new Error(`source type ${kind} not supported`);
    const def = streams.get(sourceName);
    if (!def) throw new Error(`fail to get stream ${sourceName}, please check if stream is created`);
    if (def.options.TEMP && !host.temp) throw new Error(`temp stream ${sourceName} can only be used by temp rules`);
    if (def.kind !== kind) throw new Error(kind === "table" ? `stream ${sourceName} is not a table` : `table ${sourceName} is not a stream`);
    const type = def.options.TYPE || "mqtt";
    if (n.nodeType !== type) throw new Error(`source type ${n.nodeType} does not match the stream type ${type}`);
    if (opts.isEventTime && def.kind === "stream" && !def.options.TIMESTAMP)
      throw new Error("preprocessor is set to be event time but stream option TIMESTAMP not found");
    return def;
  }
  if (host.sourceTypeExists && !host.sourceTypeExists(n.nodeType)) throw new Error(`source type ${n.nodeType} not found`);
  let schemaid = propString(p, "schemaid");
  const sn = prop(p, "schemaName");
  const sm = prop(p, "schemaMessage");
  if (!schemaid && typeof sn === "string" && typeof sm === "string") schemaid = `${sn}.${sm}`;
  const opt = (k: string) => propString(p, k) || undefined;
  const options = {
    TYPE: n.nodeType,
    DATASOURCE: opt("datasource"),
    FORMAT: opt("format"),
    KEY: opt("key"),
    CONF_KEY: opt("confKey"),
    TIMESTAMP: opt("timestamp"),
    TIMESTAMP_FORMAT: opt("timestampFormat"),
    SCHEMAID: schemaid || undefined,
    VERSION: opt("version"),
    EXTRA: opt("extra"),
    KIND: opt("kind"),
    DELIMITER: opt("delimiter"),
    STRICT_VALIDATION: propBool(p, "strictValidation") || undefined,
    SHARED: propBool(p, "shared") || undefined,
    TEMP: propBool(p, "temp") || undefined,
    RETAIN_SIZE: propInt(p, "retainSize") || undefined,
  };
  for (const k of Object.keys(options) as (keyof typeof options)[]) if (options[k] === undefined) delete options[k];
  return { name: n.name, kind: "stream", fields: null, options, statement: "" };
}

/** The plan of a stream source node with its helpers. */
export function sourcePlan(node: string, def: StreamDef, outs: string[], opts: PlanOptions): GraphSource {
  // Helpers are numbered from 2 per source (§8), as a SQL rule with one source.
  let idx = 1;
  const helpers: OpSpec[] = [];
  if (opts.decoder?.(def)) helpers.push({ kind: "decoder", name: `${++idx}_decoder` });
  const eventTime = !!opts.isEventTime;
  const strict = def.fields && def.options.STRICT_VALIDATION ? def.fields : null;
  if (strict || eventTime)
    helpers.push({
      kind: "preprocessor",
      name: `${++idx}_preprocessor`,
      spec: { strict, timestampField: eventTime ? def.options.TIMESTAMP : undefined, timestampFormat: def.options.TIMESTAMP_FORMAT, zone: opts.zone },
    });
  return { def, name: def.name, helpers, columns: null, node, outs };
}
