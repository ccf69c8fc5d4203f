/**
 * eKuiper's JWT check (rest-api.md §1.4): the bare compact token in `Authorization`, the key file
 * in `<etc>/mgmt/` named by the `iss` claim (case-insensitive), any RSA algorithm, registered
 * claims type-checked as golang-jwt decodes them (jwt-claims.ts), `exp`/`nbf`/`iat` checked
 * without leeway, `aud` must contain `eKuiper`. Keys are read per request.
 */
import { createPublicKey, createVerify, constants, type KeyObject } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { claimsInvalid, decodeClaims } from "./jwt-claims.ts";

const ALGS: Record<string, { hash: string; pss: boolean }> = {
  RS256: { hash: "RSA-SHA256", pss: false },
  RS384: { hash: "RSA-SHA384", pss: false },
  RS512: { hash: "RSA-SHA512", pss: false },
  PS256: { hash: "RSA-SHA256", pss: true },
  PS384: { hash: "RSA-SHA384", pss: true },
  PS512: { hash: "RSA-SHA512", pss: true },
};

function b64json(part: string): Record<string, unknown> | undefined {
  try {
    const v = JSON.parse(Buffer.from(part, "base64url").toString("utf8"));
    return v && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

function findKey(mgmtDir: string, iss: string): KeyObject | undefined {
  let files: string[];
  try {
    files = readdirSync(mgmtDir);
  } catch {
    return undefined;
  }
  const f = files.find((x) => x.toLowerCase() === iss.toLowerCase());
  if (!f) return undefined;
  try {
    return createPublicKey(readFileSync(join(mgmtDir, f)));
  } catch {
    return undefined;
  }
}

const validateErr = (m: string) => `validate token error: ${m}`;

/** Checks a token; returns undefined when accepted, else the body text of the 401 (without `\n`). */
export function checkToken(token: string | null, mgmtDir: string, now = Date.now()): string | undefined {
  if (!token) return "missing_token";
  const bad = validateErr;
  const parts = token.split(".");
  if (parts.length !== 3) return bad("token is malformed: token contains an invalid number of segments");
  for (const [i, what] of [[0, "header"], [1, "claim"]] as const) {
    const bad = parts[i]!.search(/[^A-Za-z0-9_-]/);
    if (bad >= 0) return validateErr(`token is malformed: could not base64 decode ${what}: illegal base64 data at input byte ${bad}`);
  }
  const header = b64json(parts[0]!);
  const claims = b64json(parts[1]!);
  if (!header) return bad("token is malformed: could not JSON decode header");
  if (!claims) return bad("token is malformed: could not JSON decode claim");
  const reg = decodeClaims(claims);
  if (typeof reg === "string") return bad(`token is malformed: could not JSON decode claim: ${reg}`);
  const iss = reg.iss;
  if (iss === "") return bad("token is unverifiable: error while executing keyfunc: issuer field not exist in jwt payload");
  const key = findKey(mgmtDir, iss);
  if (!key) return bad(`token is unverifiable: error while executing keyfunc: not found target key file ${iss} in /etc/mgmt`);
  const alg = ALGS[String(header.alg)];
  if (!alg || key.asymmetricKeyType !== "rsa") return bad("token signature is invalid: key is of invalid type");
  const v = createVerify(alg.hash);
  v.update(`${parts[0]}.${parts[1]}`);
  const sig = Buffer.from(parts[2]!, "base64url");
  const ok = alg.pss ? v.verify({ key, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: constants.RSA_PSS_SALTLEN_AUTO }, sig) : v.verify(key, sig);
  if (!ok) return bad("token signature is invalid: crypto/rsa: verification error");
  const invalid = claimsInvalid(reg, now);
  if (invalid) return bad(`token has invalid claims: ${invalid}`);
  const auds = reg.aud;
  if (!auds.includes("eKuiper")) return `audience field should contain eKuiper, but got [${auds.join(" ")}]`;
  return undefined;
}
