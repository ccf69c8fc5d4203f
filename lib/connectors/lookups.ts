/**
 * Lookup sources by table TYPE (sql §12.5). `createLookupSource` builds one from the table's
 * resolved properties (yaml confKey, CONF_KEY, EXTRA, then the table options such as
 * `datasource` and `key`: resolveSourceProps); `openLookupTable` does the whole job for a rule:
 * resolve, create, wrap in the `lookup` cache when configured, open. `createLookupEnv` is what a
 * host without a runtime env (pipe mode's file/replay runner) opens its tables with.
 */
import type { Level } from "../log.ts";
import { EngineError, ErrCode } from "../errors.ts";
import type { StreamDef } from "../plan/streams.ts";
import { ConnectionRegistry } from "./connections.ts";
import { MemoryPubSub } from "./memory/pubsub.ts";
import { resolveSourceProps, sourceType, type SourcePropEnv } from "./sources.ts";
import { CachedLookup, lookupCacheConf } from "../lookup/cache.ts";
import type { NetGuard } from "../net/guard.ts";
import type { LookupSource } from "../lookup/table.ts";
import { CONNECTORS } from "./index.ts";
import { rolesOf, type ConnectorSpec, type LookupEnv, type LookupRole } from "./spec.ts";

export type { LookupSource } from "../lookup/table.ts";
export type { LookupEnv } from "./spec.ts";

/** The lookup sources of a list of connector specs, by table TYPE (lowercased). */
export interface LookupRegistry {
  readonly types: readonly string[];
  /** A lookup source of `type`; `lookup source type <type> is not supported` for any other. */
  create(type: string, props: Record<string, unknown>, env: LookupEnv): LookupSource;
}

export function createLookupRegistry(specs: readonly ConnectorSpec[]): LookupRegistry {
  const roles = new Map<string, LookupRole>();
  for (const [name, role] of rolesOf(specs, "lookups")) {
    if (roles.has(name.toLowerCase())) throw new Error(`lookup source ${name} is declared twice (table TYPEs are matched lowercased)`);
    roles.set(name.toLowerCase(), role);
  }
  return {
    types: [...roles.keys()],
    create: (type, props, env) => {
      const r = roles.get(type);
      if (!r) throw new EngineError(`lookup source type ${type} is not supported`, ErrCode.streamTable);
      return r.create(props, env);
    },
  };
}

/** Lookup sources of every connector spec; each type's module (and its client library) loads with its first table. */
const LOOKUPS = createLookupRegistry(CONNECTORS);

/** Every lookup source type. */
export const LOOKUP_TYPES: readonly string[] = LOOKUPS.types;

/** A lookup source of `type`; `lookup source type <type> is not supported` for any other. */
export function createLookupSource(type: string, props: Record<string, unknown>, env: LookupEnv): LookupSource {
  return LOOKUPS.create(type, props, env);
}

/** A ready lookup source for table `def` (a table without TYPE is a file table, sql §3.4). */
export async function openLookupTable(def: StreamDef, env: LookupEnv & SourcePropEnv, now: () => number = Date.now): Promise<LookupSource> {
  const type = sourceType(def, "file");
  const props = await resolveSourceProps(def, type, env);
  const raw = createLookupSource(type, props, env);
  const cache = lookupCacheConf(props);
  const src = cache ? new CachedLookup(raw, cache, now) : raw;
  await src.open();
  return src;
}

/**
 * What opening lookup tables needs, for a host that builds no runtime env: the directories, the
 * outbound client and the log it is given, and its own memory pub/sub and named connections.
 */
export function createLookupEnv(p: {
  readonly etcDir: string | undefined;
  readonly baseDir: string;
  readonly outbound: NetGuard;
  readonly vars?: Readonly<Record<string, string | undefined>>;
  log(line: string, level?: Level): void;
}): LookupEnv & SourcePropEnv {
  const log = p.log;
  return {
    etcDir: p.etcDir,
    vars: p.vars ?? process.env,
    baseDir: p.baseDir,
    outbound: p.outbound,
    log,
    pubsub: new MemoryPubSub(),
    connections: new ConnectionRegistry(p.baseDir, log, undefined, CONNECTORS),
  };
}
