/**
 * The group's NATS connection: one client per instance for definitions, membership, checkpoints
 * and instance-to-instance requests. It reconnects forever (a group member outlives a NATS
 * restart); while disconnected, writes fail and are logged, and heartbeats stop, so the other
 * members take this instance's partitions over.
 */
import type { ConnectionOptions, NatsConnection } from "@nats-io/transport-node";
import { jetstreamManager } from "@nats-io/jetstream";
import { Kvm, type KV, type KvOptions } from "@nats-io/kv";
import { EngineError, ErrCode, errorText } from "../errors.ts";
import { connectNats } from "../net/nats.ts";

export type { KV, NatsConnection };

/** Connects with `options` (auth.ts) to `servers` (fails with a code-1003 error naming them when none answers or the server refuses the credentials). */
export async function connectGroup(servers: readonly string[], options: ConnectionOptions): Promise<NatsConnection> {
  try {
    return await connectNats(options);
  } catch (e) {
    throw new EngineError(`cluster: cannot connect to NATS ${servers.join(",")}: ${errorText(e)}`, ErrCode.io, { cause: e });
  }
}

/**
 * Opens (creating when absent) the JetStream KV bucket `name`. A bucket made with fewer revisions
 * per key than `opts.history` asks is raised to it when the server lets this client; otherwise it
 * stays as it is (the caller sees it in the bucket's status).
 */
export async function openBucket(nc: NatsConnection, name: string, opts: Partial<KvOptions> = {}): Promise<KV> {
  let kv: KV;
  try {
    kv = await new Kvm(nc).create(name, { history: 1, ...opts });
  } catch (e) {
    throw new EngineError(`cluster: cannot open the JetStream KV bucket ${name} (is JetStream enabled on the NATS server?): ${errorText(e)}`, ErrCode.io, { cause: e });
  }
  const want = opts.history ?? 1;
  try {
    const status = await kv.status();
    if (status.history < want) await (await jetstreamManager(nc)).streams.update(status.streamInfo.config.name, { max_msgs_per_subject: want });
  } catch {
    // Left as it is: the definitions' start-up says what to do about it.
  }
  return kv;
}

/** A string as one KV key token (base64url: letters, digits, - and _ only). */
export function keyToken(s: string): string {
  return Buffer.from(s, "utf8").toString("base64url") || "_";
}

export function fromKeyToken(t: string): string {
  return t === "_" ? "" : Buffer.from(t, "base64url").toString("utf8");
}
