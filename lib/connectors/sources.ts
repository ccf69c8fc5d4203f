/**
 * Source connectors by stream TYPE and their property resolution (rules-and-sinks.md §8): the
 * yaml `default` confKey, then `CONF_KEY`, then a `connectionSelector`'s connection, then
 * `EXTRA`, then the stream options injected (`format`, `datasource`, …).
 */
import type { Level } from "../log.ts";
import { loadSourceYaml } from "./conf-files.ts";
import { EngineError, ErrCode } from "../errors.ts";
import type { StreamDef } from "../plan/streams.ts";
import { mergeProps, PropReader } from "../config/props.ts";
import type { SourceConnector } from "../source/connector.ts";
import { CONNECTORS } from "./index.ts";
import { rolesOf, type ConnectorSpec, type SourceConnectorEnv, type SourceRole } from "./spec.ts";

export type { SourceConnectorEnv } from "./spec.ts";

/** The source connectors of a list of connector specs, by stream TYPE (lowercased). */
export interface SourceRegistry {
  /** Every source connector type, lowercased (stream TYPEs are matched lowercased). */
  readonly types: readonly string[];
  /** A graph rule's source nodeTypes, matched as written: eKuiper's spelling (`redisSub`) and the lowercased type. */
  readonly nodeTypes: ReadonlySet<string>;
  /** eKuiper's spelling of a source or lookup type (`redissub` → `redisSub`): its confKey file's name. */
  readonly names: ReadonlyMap<string, string>;
  /** Byte sources get a decoder node (`<i>_decoder`); tuple sources do not. */
  isByteSource(type: string): boolean;
  /** Pull sources read every `interval`; on the others (push sources) `interval` is a rate limit. */
  pulls(type: string): boolean;
  /** A connector of `type`; `source <type> is not defined` for any other. */
  create(type: string, props: Record<string, unknown>, env: SourceConnectorEnv): SourceConnector;
}

/** Pipe mode's `stdin` has no connector: the host reads standard input and hands over tuples. */
const HOST_TUPLES = "stdin";

export function createSourceRegistry(specs: readonly ConnectorSpec[]): SourceRegistry {
  const roles = new Map<string, SourceRole>();
  const nodeTypes = new Set<string>();
  const names = new Map<string, string>();
  for (const [name, role] of rolesOf(specs, "sources")) {
    if (roles.has(name.toLowerCase())) throw new Error(`source ${name} is declared twice (stream TYPEs are matched lowercased)`);
    roles.set(name.toLowerCase(), role);
    nodeTypes.add(name).add(name.toLowerCase());
    names.set(name.toLowerCase(), name);
  }
  for (const name of rolesOf(specs, "lookups").keys()) if (!names.has(name.toLowerCase())) names.set(name.toLowerCase(), name);
  const tuples = new Set([HOST_TUPLES]);
  const pulls = new Set<string>();
  for (const [type, r] of roles) {
    if (r.tuples) tuples.add(type);
    if (r.pulls) pulls.add(type);
  }
  return {
    types: [...roles.keys()],
    nodeTypes,
    names,
    isByteSource: (type) => !tuples.has(type),
    pulls: (type) => pulls.has(type),
    create: (type, props, env) => {
      const r = roles.get(type);
      if (!r) throw new EngineError(`source ${type} is not defined`, ErrCode.streamTable);
      return r.create(props, env);
    },
  };
}

/** The source connectors of every connector spec (connectors/index.ts). */
const SOURCES = createSourceRegistry(CONNECTORS);

/**
 * The connector type of a stream or table. Without TYPE: `fallback` when the host gives one (pipe mode's
 * stdin), else eKuiper's defaults — `mqtt` for a stream, `file` for a table (sql §3.4).
 */
export function sourceType(def: StreamDef, fallback?: string): string {
  return (def.options.TYPE ?? "").toLowerCase() || fallback || (def.kind === "table" ? "file" : "mqtt");
}

export function isByteSource(type: string): boolean {
  return SOURCES.isByteSource(type);
}

/**
 * The rate limit of a push source from its resolved props: the `interval` in ms, or undefined
 * when none is set (0 or less) or the source pulls.
 */
export function rateLimitOf(type: string, props: Record<string, unknown>): number | undefined {
  // Pull sources read every `interval` (rules-and-sinks.md §8.1).
  if (SOURCES.pulls(type)) return undefined;
  const r = new PropReader(props);
  const ms = r.duration("interval", 0);
  if (!(ms > 0)) return undefined;
  if (ms < 1) throw new EngineError("interval should be larger than 1ms", ErrCode.general);
  // eKuiper's frame mergers are plugins floe does not have: refused rather than silently not merging.
  if (r.str("merger") || r.str("mergeField")) throw new EngineError("the rate limit's merger and mergeField are not supported by floe", ErrCode.general);
  return ms;
}

export interface SourcePropEnv {
  readonly etcDir: string | undefined;
  readonly vars: Readonly<Record<string, string | undefined>>;
  confKey?(kind: "sources" | "connections", type: string, key: string): Record<string, unknown> | undefined;
  /** Named connections of any type by id: a selector naming one of another type is refused by type. */
  readonly connections?: { resolve: ((id: string) => { readonly typ: string } | undefined) | undefined };
  log(line: string, level?: Level): void;
}

/** `connection <id> not existed`, or `connection <id> should be <type> connection` when it has another type. */
export function selectorError(sel: string, type: string, env: Pick<SourcePropEnv, "connections">): EngineError {
  const other = env.connections?.resolve?.(sel);
  return new EngineError(other ? `connection ${sel} should be ${type} connection` : `connection ${sel} not existed`, ErrCode.io);
}

/**
 * The yaml confKeys of each source type, read once per runtime env: like eKuiper, floe reads
 * `etc/` at startup, and re-reading (and cloning the shipped defaults) at every rule start was
 * churn the daemon's memory kept.
 */
const yamlMemo = new WeakMap<SourcePropEnv, Map<string, Promise<Record<string, unknown> | undefined>>>();

function sourceYaml(env: SourcePropEnv, type: string): Promise<Record<string, unknown> | undefined> {
  let m = yamlMemo.get(env);
  if (!m) yamlMemo.set(env, (m = new Map()));
  let p = m.get(type);
  // Stream TYPEs are lowercased; the yaml file keeps eKuiper's spelling (`sources/redisSub.yaml`).
  if (!p) m.set(type, (p = loadSourceYaml(env.etcDir, SOURCES.names.get(type) ?? type, env.vars)));
  return p;
}

export async function resolveSourceProps(def: StreamDef, type: string, env: SourcePropEnv): Promise<Record<string, unknown>> {
  const yaml = (await sourceYaml(env, type)) ?? {};
  const asProps = (v: unknown) => (v && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined);
  let props = mergeProps(asProps(yaml.default), env.confKey?.("sources", type, "default"));
  const ck = def.options.CONF_KEY;
  if (ck) {
    const fromYaml = asProps(yaml[ck.toLowerCase()]) ?? asProps(yaml[ck]);
    const fromKv = env.confKey?.("sources", type, ck.toLowerCase()) ?? env.confKey?.("sources", type, ck);
    if (!fromYaml && !fromKv) env.log(`conf key ${ck} of stream ${def.name} is not found, using the default`);
    props = mergeProps(props, fromYaml, fromKv);
  }
  const sel = new PropReader(props).str("connectionSelector");
  if (sel) {
    const conn = env.confKey?.("connections", type, sel);
    if (!conn) throw selectorError(sel, type, env);
    props = mergeProps(props, conn);
  }
  const o = def.options;
  if (o.EXTRA) {
    try {
      props = mergeProps(props, JSON.parse(o.EXTRA) as Record<string, unknown>);
    } catch (e) {
      throw new EngineError(`invalid EXTRA ${o.EXTRA}: ${(e as Error).message}`, ErrCode.streamTable);
    }
  }
  const inject: Record<string, unknown> = { format: (o.FORMAT ?? "json").toLowerCase() };
  if (o.KEY !== undefined) inject.key = o.KEY;
  if (o.DATASOURCE !== undefined) inject.datasource = o.DATASOURCE;
  if (o.SCHEMAID !== undefined) inject.schemaId = o.SCHEMAID;
  if (o.DELIMITER !== undefined) inject.delimiter = o.DELIMITER;
  if (o.RETAIN_SIZE !== undefined) inject.retainSize = o.RETAIN_SIZE;
  if (o.STRICT_VALIDATION !== undefined) inject.strictValidation = o.STRICT_VALIDATION;
  if (o.TIMESTAMP !== undefined) inject.timestamp = o.TIMESTAMP;
  if (o.TIMESTAMP_FORMAT !== undefined) inject.timestampFormat = o.TIMESTAMP_FORMAT;
  // A file table reads each file (json) or each read batch (csv) as one record, as eKuiper's does.
  if (def.kind === "table" && type === "file") inject.isTable = true;
  return mergeProps(props, inject);
}

/** Every source connector type (stream TYPEs, lowercased). */
export const SOURCE_TYPES: readonly string[] = SOURCES.types;

/** A graph rule's source nodeTypes (graph-rules.md §4): eKuiper's spelling, and the lowercased type floe accepted before. */
export const SOURCE_NODE_TYPES: ReadonlySet<string> = SOURCES.nodeTypes;

/** A connector of `type`; `source <type> is not defined` for any other. */
export function createSourceConnector(type: string, props: Record<string, unknown>, env: SourceConnectorEnv): SourceConnector {
  return SOURCES.create(type, props, env);
}
