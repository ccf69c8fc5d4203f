/**
 * Lookup sources by table TYPE (sql §12.5). `createLookupSource` builds one from the table's
 * resolved properties (yaml confKey, CONF_KEY, EXTRA, then the table options such as
 * `datasource` and `key`: resolveSourceProps); `openLookupTable` does the whole job for a rule:
 * resolve, create, wrap in the `lookup` cache when configured, open.
 */
import { EngineError, ErrCode } from "../../errors.ts";
import type { StreamDef } from "../../plan/streams.ts";
import type { ConnectionRegistry } from "../connections.ts";
import type { MemoryPubSub } from "../memory-pubsub.ts";
import { resolveSourceProps, sourceType, type SourcePropEnv } from "../sources/index.ts";
import { CachedLookup, lookupCacheConf } from "./cache.ts";
import type { Resolver } from "../net-guard.ts";
import type { LookupSource } from "./lookup.ts";

export type { LookupSource } from "./lookup.ts";

export interface LookupEnv {
  readonly pubsub: MemoryPubSub;
  readonly connections: ConnectionRegistry;
  readonly baseDir: string;
  /** `basic.enablePrivateNet`: httppull may reach loopback/private addresses. */
  readonly enablePrivateNet?: boolean;
  /** Host name resolution for the private-network guard (default getaddrinfo). */
  readonly resolveHost?: Resolver;
}

/** A lookup source of `type`; each type's module (and its client library) loads with its first table (issue 11). */
export function createLookupSource(type: string, props: Record<string, unknown>, env: LookupEnv): LookupSource {
  switch (type) {
    case "memory": {
      const { MemoryLookup } = require("./memory.ts") as typeof import("./memory.ts");
      return new MemoryLookup(props, env.pubsub);
    }
    case "simulator": {
      const { SimulatorLookup } = require("./simulator.ts") as typeof import("./simulator.ts");
      return new SimulatorLookup(props);
    }
    case "redis": {
      const { RedisLookup } = require("./redis.ts") as typeof import("./redis.ts");
      return new RedisLookup(props);
    }
    case "httppull": {
      const { HttpPullLookup } = require("./httppull.ts") as typeof import("./httppull.ts");
      return new HttpPullLookup(props, env);
    }
    case "sql": {
      const { SqlLookup } = require("./sql.ts") as typeof import("./sql.ts");
      return new SqlLookup(props);
    }
  }
  throw new EngineError(`lookup source type ${type} is not supported`, ErrCode.streamTable);
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
