/**
 * The seam between the managers (streams, rules, confKeys, UDFs) and where their definitions
 * live: the local sqlite KV (store/kv.ts) on a single node, a store replicated over the group's
 * JetStream KV bucket (cluster/replicated-store.ts) when `cluster.nats` is set. Reads are
 * synchronous and local in both; a write is committed locally before it returns.
 */
/** The namespaces (eKuiper's KV tables). */
export type Namespace =
  | "stream"
  | "tempStream"
  | "rule"
  | "confKey"
  | "upload"
  | "script"
  | "schema"
  | "asyncTask"
  | "importStatus"
  | "meta";

export interface DefinitionStore {
  get(ns: Namespace, key: string): string | undefined;
  set(ns: Namespace, key: string, value: string): void;
  /** Inserts only when absent (eKuiper's Setnx); false when the key existed. */
  setnx(ns: Namespace, key: string, value: string): boolean;
  delete(ns: Namespace, key: string): boolean;
  /** Entries of a namespace in ascending key order. */
  entries(ns: Namespace): [string, string][];
  keys(ns: Namespace): string[];
  clear(ns: Namespace): void;
  /** Runs `fn` in one transaction (all or nothing). */
  transaction<T>(fn: () => T): T;
  close(): void;
}
