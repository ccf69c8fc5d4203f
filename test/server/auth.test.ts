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

// Claims are decoded into golang-jwt's RegisteredClaims before the key is looked up (
// `exp: "1"` used to be ignored, so the token was accepted).
const malformed = (m: string) => `validate token error: token is malformed: could not JSON decode claim: ${m}\n`;
test.each([
  ["exp a numeric string is a NumericDate: second 1 of 1970", { iss: "sample_key.pub", aud: "eKuiper", exp: "1" }, "validate token error: token has invalid claims: token is expired\n"],
  ["exp a non-numeric string", { iss: "sample_key.pub", aud: "eKuiper", exp: "soon" }, malformed('could not parse NumericDate: json: invalid number literal, trying to unmarshal "\\"soon\\"" into Number')],
  ["exp a bool", { iss: "sample_key.pub", aud: "eKuiper", exp: true }, malformed("could not parse NumericDate: json: cannot unmarshal bool into Go value of type json.Number")],
  ["nbf an object", { iss: "sample_key.pub", aud: "eKuiper", nbf: { t: 1 } }, malformed("could not parse NumericDate: json: cannot unmarshal object into Go value of type json.Number")],
  ["iss a number", { iss: 5, aud: "eKuiper" }, malformed("json: cannot unmarshal number into Go struct field Token.iss of type string")],
  ["sub an array", { iss: "sample_key.pub", sub: [1], aud: "eKuiper" }, malformed("json: cannot unmarshal array into Go struct field Token.sub of type string")],
  ["aud a number", { iss: "sample_key.pub", aud: 7 }, malformed("invalid type for claim")],
  ["aud an array holding a number", { iss: "sample_key.pub", aud: ["eKuiper", 1] }, malformed("invalid type for claim")],
  ["keys match case-insensitively", { iss: "sample_key.pub", aud: "eKuiper", EXP: "1" }, "validate token error: token has invalid claims: token is expired\n"],
  ["claim errors are joined", { iss: "sample_key.pub", aud: "eKuiper", exp: 1, nbf: 4102444800 }, "validate token error: token has invalid claims: token is expired, token is not valid yet\n"],
] as const)("claims: %s → 401", async (_n, claims, body) => {
  const r = await d.call("GET", "/streams", undefined, { Authorization: token(claims) });
  expect([r.status, r.text]).toEqual([401, body]);
});

test("claims of the right types are accepted: a numeric-string exp in the future, a null nbf", async () => {
  const r = await d.call("GET", "/streams", undefined, { Authorization: token({ iss: "sample_key.pub", aud: "eKuiper", exp: String(now() + 60), nbf: null, jti: "x" }) });
  expect([r.status, r.text]).toEqual([200, "[]"]);
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
