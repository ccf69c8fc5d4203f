/**
 * The connector spec: everything floe knows about one technology, declared once in its folder
 * (`<tech>/spec.ts`) and listed once in `index.ts`. Every registry reads that list: the source,
 * sink and lookup registries (`sources.ts`, `sinks.ts`, `lookups.ts`), named connections
 * (`connections.ts`), the shipped confKeys (`conf-files.ts`), `/metadata` and its connectivity
 * checks, graph rules' source node types and the console's connection view.
 *
 * Roles are keyed by eKuiper's spelling of the connector (`redisSub`, `redisPub`): it is the
 * `/metadata` name, the confKey file name (`etc/sources/redisSub.yaml`) and an action type. A
 * stream's TYPE is matched lowercased (`redissub`); a graph rule's source nodeType is matched as
 * written, in eKuiper's spelling or lowercased.
 */
import type { Doc } from "../config/env.ts";
import type { Props } from "../config/props.ts";
import type { LookupSource } from "../lookup/table.ts";
import type { NetGuard } from "../net/guard.ts";
import type { SinkConnector } from "../sink/connector.ts";
import type { SourceConnector } from "../source/connector.ts";
import type { ConnectionRegistry, ConnectionRole } from "./connections.ts";
import type { DataServer } from "./http/server.ts";
import type { MemoryPubSub } from "./memory/pubsub.ts";
import type { ReaderKind } from "./mqtt/client.ts";

export type { ConnectionRole, LiveConnection, LiveConnectionEnv } from "./connections.ts";

export interface SourceConnectorEnv {
  readonly pubsub: MemoryPubSub;
  readonly connections: ConnectionRegistry;
  readonly baseDir: string;
  readonly mqttReader: ReaderKind | undefined;
  /** The owner's outbound client (`basic.enablePrivateNet`) for httppull and websocket clients. */
  readonly outbound: NetGuard;
  /** httppush and websocket server endpoints. */
  readonly dataServer: DataServer;
}

export interface SinkEnv {
  readonly pubsub: MemoryPubSub;
  readonly connections?: ConnectionRegistry;
  /** websocket and sse server endpoints. */
  readonly dataServer?: DataServer;
  /** The owner's outbound client (`basic.enablePrivateNet`) for the REST sink and websocket clients. */
  readonly outbound: NetGuard;
}

export interface LookupEnv {
  readonly pubsub: MemoryPubSub;
  readonly connections: ConnectionRegistry;
  readonly baseDir: string;
  /** The owner's outbound client (`basic.enablePrivateNet`) for httppull. */
  readonly outbound: NetGuard;
}

/** A failed connectivity check: eKuiper's error code and text, answered as a 400. */
export interface PingFailure {
  readonly code: number;
  readonly message: string;
}

/** Checks that the connector can reach its server with `props`; undefined when it answered. */
export type Ping = (props: Record<string, unknown>) => Promise<PingFailure | undefined>;

/**
 * How `/metadata` shows a role: `listed` (the default; eKuiper's default build has it), `unlisted`
 * (floe's own: answered by name, left out of the lists) or `none` (no metadata at all).
 */
export type Listing = "listed" | "unlisted" | "none";

interface Role {
  readonly metadata?: Listing;
  /** `POST /metadata/{sources|sinks|lookups}/connection/<name>`; without one, the connector doesn't support ping. */
  readonly ping?: Ping;
  /** Its node holds a client of a remote service (the console's connection view lists it). */
  readonly remote?: boolean;
}

export interface SourceRole extends Role {
  /** Loads the connector's module on first use (start-up time and memory of the ones never used). */
  readonly create: (props: Record<string, unknown>, env: SourceConnectorEnv) => SourceConnector;
  /** Emits tuples, not bytes: the stream gets no decoder node (`<i>_decoder`). */
  readonly tuples?: boolean;
  /** Pulls every `interval`; on a push source `interval` is a rate limit (rules-and-sinks.md §8.1). */
  readonly pulls?: boolean;
  /** The confKey properties `/metadata/sources/<name>` marks `connection_related`. */
  readonly connectionProps?: readonly string[];
}

export interface SinkRole extends Role {
  /** Loads the connector's module on first use; connector properties are validated first. */
  readonly create: (props: Props, env: SinkEnv) => SinkConnector;
  /** The properties and defaults `/metadata/sinks/<name>` shows, in that order. */
  readonly props?: Doc;
}

export interface LookupRole extends Role {
  /** Loads the lookup source's module (and its client library) with its first table. */
  readonly create: (props: Record<string, unknown>, env: LookupEnv) => LookupSource;
}

export interface ConnectorSpec {
  /** The technology: its folder under lib/connectors/. */
  readonly tech: string;
  /** Source connectors (stream TYPEs). */
  readonly sources?: Readonly<Record<string, SourceRole>>;
  /** Sink connectors (action types, case-sensitive). */
  readonly sinks?: Readonly<Record<string, SinkRole>>;
  /** Lookup sources (lookup table TYPEs). */
  readonly lookups?: Readonly<Record<string, LookupRole>>;
  /** Named connection types (`/connections`, `connectionSelector`). */
  readonly connections?: Readonly<Record<string, ConnectionRole>>;
  /**
   * The confKey files eKuiper ships, by source or lookup name (config-and-cli.md §3.1): used when
   * etc has no file for the connector, and `/metadata/sources/<name>` shows their `default`.
   */
  readonly confKeys?: Readonly<Record<string, Doc>>;
  /**
   * Where floe's defaults differ from the shipped confKeys, by name: applied only when etc has no
   * file for the connector (`GET /metadata` still reports the shipped values).
   */
  readonly floeConfKeys?: Readonly<Record<string, Doc>>;
  /** Property names whose camelCase is restored after a confKey file is lower-cased (env overrides). */
  readonly camelProps?: readonly string[];
}

type RoleKind = "sources" | "sinks" | "lookups" | "connections";
type RoleOf<K extends RoleKind> = NonNullable<ConnectorSpec[K]>[string];

/** Every role of `kind` in the list, by name, in list order. */
export function rolesOf<K extends RoleKind>(specs: readonly ConnectorSpec[], kind: K): Map<string, RoleOf<K>> {
  const out = new Map<string, RoleOf<K>>();
  for (const s of specs) {
    const roles = s[kind] as Readonly<Record<string, RoleOf<K>>> | undefined;
    if (!roles) continue;
    for (const name of Object.keys(roles)) {
      if (out.has(name)) throw new Error(`connector ${kind} ${name} is declared twice (${s.tech})`);
      out.set(name, roles[name]!);
    }
  }
  return out;
}

/** The role's names `/metadata` answers (listed and unlisted) and those it lists. */
export function metadataNames(roles: ReadonlyMap<string, { readonly metadata?: Listing }>, listedOnly: boolean): string[] {
  const out: string[] = [];
  for (const [name, r] of roles) {
    const m = r.metadata ?? "listed";
    if (m === "listed" || (m === "unlisted" && !listedOnly)) out.push(name);
  }
  return out;
}
