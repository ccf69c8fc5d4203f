/**
 * The envelope of a definition entry in the group's bucket: `{v, o, s, p, h}` — the stored text
 * (null once deleted: a tombstone), the instance that wrote it, that instance's write sequence,
 * the KV revision of the entry this write replaces (0: the key had none), and the HMAC of
 * `[v, o, s, p]` under the bucket key and the group secret (auth.ts). Writers store an entry with
 * a compare-and-set on `p`, so a member's entry always follows revision `p` in the key's history;
 * a signed entry put back later by someone without the secret (a replay: a deleted definition
 * re-created, a rule rolled back) follows a newer revision, and its `p` gives it away.
 */
import type { EntrySigner } from "./auth.ts";

export interface Envelope {
  readonly v: string | null;
  readonly o: string;
  readonly s: number;
  /** The revision this entry replaces (0: none). */
  readonly p: number;
}

/** Why a stored entry is refused; `older` marks one that an older floe signed without `p`. */
export interface Refused {
  readonly why: string;
  readonly older: boolean;
}

export const isRefused = (d: Envelope | Refused): d is Refused => "why" in d;

const NO_SIGNATURE = "no valid signature of the group secret";
/** What an older floe signed: the same fields without `p`. */
const OLDER_FLOE = "an entry of an older floe, signed without the revision it replaces (see the start-up log)";

/** The envelope's JSON text, signed under bucket key `key`. */
export function sealEnvelope(signer: EntrySigner, key: string, e: Envelope): string {
  return JSON.stringify({ v: e.v, o: e.o, s: e.s, p: e.p, h: signer.sign(key, JSON.stringify([e.v, e.o, e.s, e.p])) });
}

/**
 * The envelope of the entry stored under `key` whose key's previous revision is `prev` (0: none),
 * when it is a signed PUT that replaces exactly that revision; else why not.
 */
export function openEnvelope(signer: EntrySigner, key: string, value: Uint8Array, operation: string, prev: number): Envelope | Refused {
  if (operation !== "PUT") return { why: `${operation.toLowerCase()} from outside the group (members write tombstones)`, older: false };
  let o: Record<string, unknown>;
  try {
    o = JSON.parse(new TextDecoder().decode(value)) as Record<string, unknown>;
  } catch {
    return { why: "not JSON", older: false };
  }
  if (o === null || typeof o !== "object" || !(o.v === null || typeof o.v === "string") || typeof o.o !== "string" || typeof o.s !== "number") return { why: "not an entry envelope", older: false };
  if (o.p === undefined) {
    const older = signer.verify(key, JSON.stringify([o.v, o.o, o.s]), o.h);
    return older ? { why: OLDER_FLOE, older } : { why: NO_SIGNATURE, older };
  }
  if (typeof o.p !== "number") return { why: "not an entry envelope", older: false };
  const e: Envelope = { v: o.v, o: o.o, s: o.s, p: o.p };
  if (!signer.verify(key, JSON.stringify([e.v, e.o, e.s, e.p]), o.h)) return { why: NO_SIGNATURE, older: false };
  if (e.p !== prev) return { why: `it replaces revision ${e.p}, but the key's previous revision is ${prev}: a replayed or rolled-back entry`, older: false };
  return e;
}
