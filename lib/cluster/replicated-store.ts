/**
 * The definition store of a group member: the local sqlite KV stays the synchronous copy every
 * manager reads, and each committed write of a group-wide namespace is also published to the
 * group's bucket (definitions.ts). Changes that come from the group are applied with `quietly`,
 * which writes locally without publishing them back (no echo).
 */
import type { DefinitionStore, Namespace } from "../store/definition-store.ts";

/** Namespaces the group shares: streams and tables, rules, confKeys (incl. connections), JavaScript UDFs. */
export const GROUP_NAMESPACES: readonly Namespace[] = ["stream", "tempStream", "rule", "confKey", "script"];
const SHARED = new Set<Namespace>(GROUP_NAMESPACES);

/** Publishes one committed change (`value` undefined: deleted). */
export type PublishChange = (ns: Namespace, key: string, value: string | undefined) => void;

export class ReplicatedStore implements DefinitionStore {
  private quiet = 0;
  /** Changes of the open transaction, published once it commits. */
  private pending: [Namespace, string, string | undefined][] | undefined;

  constructor(
    readonly local: DefinitionStore,
    private readonly publish: PublishChange,
  ) {}

  get(ns: Namespace, key: string): string | undefined {
    return this.local.get(ns, key);
  }

  entries(ns: Namespace): [string, string][] {
    return this.local.entries(ns);
  }

  keys(ns: Namespace): string[] {
    return this.local.keys(ns);
  }

  set(ns: Namespace, key: string, value: string): void {
    this.local.set(ns, key, value);
    this.out(ns, key, value);
  }

  setnx(ns: Namespace, key: string, value: string): boolean {
    if (!this.local.setnx(ns, key, value)) return false;
    this.out(ns, key, value);
    return true;
  }

  delete(ns: Namespace, key: string): boolean {
    if (!this.local.delete(ns, key)) return false;
    this.out(ns, key, undefined);
    return true;
  }

  clear(ns: Namespace): void {
    const keys = this.local.keys(ns);
    this.local.clear(ns);
    for (const k of keys) this.out(ns, k, undefined);
  }

  transaction<T>(fn: () => T): T {
    if (this.pending) return this.local.transaction(fn);
    const pending: [Namespace, string, string | undefined][] = [];
    this.pending = pending;
    let out: T;
    try {
      out = this.local.transaction(fn);
    } finally {
      this.pending = undefined;
    }
    for (const [ns, k, v] of pending) this.out(ns, k, v);
    return out;
  }

  /** Runs `fn` (synchronous) with its writes kept local: a change that came from the group. */
  quietly<T>(fn: () => T): T {
    this.quiet++;
    try {
      return fn();
    } finally {
      this.quiet--;
    }
  }

  close(): void {
    this.local.close();
  }

  private out(ns: Namespace, key: string, value: string | undefined): void {
    if (this.quiet > 0 || !SHARED.has(ns)) return;
    if (this.pending) this.pending.push([ns, key, value]);
    else this.publish(ns, key, value);
  }
}
