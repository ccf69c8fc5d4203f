/**
 * The group's trust boundary. Two locks, both required of a writer of the group's definitions:
 * NATS credentials (the server decides who may connect and write the buckets; every group
 * connection presents the section's token, user/password, `.creds` file or nkey seed, over TLS when
 * asked), and the group secret: every definition entry carries an HMAC-SHA256 over its key and
 * content, and a member applies only entries whose HMAC it can verify. The secret comes from the
 * config file, the environment (`KUIPER__CLUSTER__SECRET`) or a key file; it is never written to NATS.
 */
import { createHmac, timingSafeEqual } from "node:crypto";
import { readFileSync } from "node:fs";
import { isAbsolute, join } from "node:path";
import { nkeyAuthenticator, type ConnectionOptions } from "@nats-io/transport-node";
import type { ClusterAuth } from "../config/kuiper.ts";
import { EngineError, ErrCode, errorText } from "../errors.ts";
import { parseNatsConf } from "../connectors/nats/conf.ts";
import { PropReader } from "../config/props.ts";

/** Shorter secrets are refused: an HMAC key is only as strong as its guessability. */
export const MIN_SECRET_BYTES = 16;

/** The group secret's bytes (inline `secret`, else `secretFile`'s content, trimmed); throws when absent or short. */
export function groupSecret(auth: ClusterAuth): Uint8Array {
  let text = auth.secret;
  if (text === "" && auth.secretFile !== "") {
    try {
      text = readFileSync(auth.secretFile, "utf8").trim();
    } catch (e) {
      throw new EngineError(`cluster: cannot read cluster.secretFile ${auth.secretFile}: ${errorText(e)}`, ErrCode.confKey, { cause: e });
    }
  }
  if (text === "") throw new EngineError("cluster: a group needs cluster.secret or cluster.secretFile: members apply only definitions signed with it", ErrCode.confKey);
  const bytes = new TextEncoder().encode(text);
  if (bytes.length < MIN_SECRET_BYTES) throw new EngineError(`cluster: the group secret is ${bytes.length} bytes long, shorter than ${MIN_SECRET_BYTES}`, ErrCode.confKey);
  return bytes;
}

/**
 * The group connection's options: the `cluster:` section's NATS properties read by the `nats`
 * connector's own parser (connectors/nats/conf.ts), plus `nkeySeed` / `nkeySeedFile` (an nkey user).
 */
export function groupConnectionOptions(servers: readonly string[], auth: ClusterAuth, name: string): ConnectionOptions {
  const conf = parseNatsConf({ ...auth.nats, server: [...servers] }, { base: auth.base, name });
  const r = new PropReader(auth.nats);
  let seed = r.str("nkeySeed");
  const seedFile = r.str("nkeySeedFile");
  if (!seed && seedFile) {
    try {
      seed = readFileSync(isAbsolute(seedFile) ? seedFile : join(auth.base, seedFile), "utf8").trim();
    } catch (e) {
      throw new EngineError(`cluster: cannot read cluster.nkeySeedFile ${seedFile}: ${errorText(e)}`, ErrCode.confKey, { cause: e });
    }
  }
  const options: ConnectionOptions = { ...conf.options, name, waitOnFirstConnect: false, maxReconnectAttempts: -1, reconnectTimeWait: 500, timeout: 5000 };
  if (seed) {
    if (options.authenticator) throw new EngineError("cluster: credsFile and nkeySeed are exclusive", ErrCode.confKey);
    options.authenticator = nkeyAuthenticator(new TextEncoder().encode(seed));
  }
  return options;
}

/** Signs and verifies entries with the group secret. */
export class EntrySigner {
  constructor(private readonly secret: Uint8Array) {}

  /** The HMAC (base64url) of `content` stored under `key`: moving a signed value to another key breaks it. */
  sign(key: string, content: string): string {
    return createHmac("sha256", this.secret).update(key).update("\u0000").update(content).digest("base64url");
  }

  verify(key: string, content: string, mac: unknown): boolean {
    if (typeof mac !== "string") return false;
    const want = Buffer.from(this.sign(key, content));
    const got = Buffer.from(mac);
    return got.length === want.length && timingSafeEqual(got, want);
  }
}
