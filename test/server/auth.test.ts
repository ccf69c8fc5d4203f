/** JWT authentication (rest-api.md §1.4): RS256 keys in etc/mgmt, eKuiper's 401 texts. */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createSign, generateKeyPairSync } from "node:crypto";
import { startFloe, tempHome, type DaemonProc } from "./daemon.ts";

const { publicKey, privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
let d: DaemonProc;

function token(claims: Record<string, unknown>, alg = "RS256"): string {
  const b64 = (o: object) => Buffer.from(JSON.stringify(o)).toString("base64url");
  const head = `${b64({ alg, typ: "JWT" })}.${b64(claims)}`;
  const sig = createSign("RSA-SHA256").update(head).sign(privateKey).toString("base64url");
  return `${head}.${sig}`;
}

beforeAll(async () => {
  const dir = tempHome({ "mgmt/sample_key.pub": publicKey.export({ type: "spki", format: "pem" }).toString() });
  d = await startFloe(dir, { KUIPER__BASIC__AUTHENTICATION: "true" });
});

afterAll(async () => {
  await d?.stop();
});

const now = () => Math.floor(Date.now() / 1000);

test("/ and /ping need no token, 404s are answered before authentication", async () => {
  expect((await d.call("GET", "/ping")).status).toBe(200);
  expect((await d.call("GET", "/")).status).toBe(200);
  expect((await d.call("GET", "/nope")).status).toBe(404);
});

test.each([
  ["no token", undefined, "missing_token\n"],
  ["bearer prefix", `Bearer ${token({ iss: "sample_key.pub", aud: "eKuiper" })}`, "validate token error: token is malformed: could not base64 decode header: illegal base64 data at input byte 6\n"],
  ["two segments", "abc.def", "validate token error: token is malformed: token contains an invalid number of segments\n"],
  ["no issuer", token({ aud: "eKuiper" }), "validate token error: token is unverifiable: error while executing keyfunc: issuer field not exist in jwt payload\n"],
  ["unknown key", token({ iss: "other.pub", aud: "eKuiper" }), "validate token error: token is unverifiable: error while executing keyfunc: not found target key file other.pub in /etc/mgmt\n"],
  ["expired", token({ iss: "Sample_Key.pub", aud: "eKuiper", exp: now() - 10 }), "validate token error: token has invalid claims: token is expired\n"],
  ["wrong audience", token({ iss: "sample_key.pub", aud: "Neuron" }), "audience field should contain eKuiper, but got [Neuron]\n"],
] as const)("%s → 401", async (_n, tok, body) => {
  const r = await d.call("GET", "/streams", undefined, tok ? { Authorization: tok } : {});
  expect([r.status, r.text]).toEqual([401, body]);
});

test("a valid RS256 token (issuer matched case-insensitively) is accepted", async () => {
  const r = await d.call("GET", "/streams", undefined, { Authorization: token({ iss: "Sample_Key.pub", aud: ["eKuiper"], exp: now() + 60 }) });
  expect([r.status, r.text]).toEqual([200, "[]"]);
});

test("a tampered signature is refused", async () => {
  const t = token({ iss: "sample_key.pub", aud: "eKuiper" });
  const bad = t.slice(0, -4) + (t.endsWith("AAAA") ? "BBBB" : "AAAA");
  const r = await d.call("GET", "/streams", undefined, { Authorization: bad });
  expect(r.status).toBe(401);
  expect(r.text).toStartWith("validate token error: token signature is invalid");
});
