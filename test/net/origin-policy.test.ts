/**
 * The request-origin policy decided on requests alone (test/hostile/origin.test.ts runs it on a
 * daemon): which Hosts are accepted, which origins may call a guarded route, what an open route
 * answers, and what the allow-lists change.
 */
import { describe, expect, test } from "bun:test";
import { hostname } from "node:os";
import { OriginPolicy } from "../../lib/net/origin-policy.ts";

const policy = (allowedOrigins: string[] = [], allowedHosts: string[] = [], scheme: "http" | "https" = "http") =>
  new OriginPolicy({ allowedOrigins, allowedHosts, scheme, bindHosts: ["10.1.2.3", "edge.lan"] });

/** What `admit` says: "refused", or the Access-Control-Allow-Origin to send ("-" for none). */
function verdict(p: OriginPolicy, headers: Record<string, string>, open = false): string {
  const a = p.admit(new Request("http://127.0.0.1:9081/rules", { headers }), open);
  return a.refused ? "refused" : (a.allowOrigin ?? "-");
}

describe("Host", () => {
  const CASES: [string, string][] = [
    ["127.0.0.1:9081", "-"],
    ["127.9.9.9:9081", "-"],
    ["[::1]:9081", "-"],
    ["192.168.1.20:9081", "-"],
    ["2130706433:9081", "-"],
    ["localhost:9081", "-"],
    ["LocalHost.:9081", "-"],
    ["console.localhost:9081", "-"],
    ["10.1.2.3", "-"],
    ["edge.lan:9081", "-"],
    [`${hostname()}:9081`, "-"],
    ["evil.example:9081", "refused"],
    ["attacker.127.0.0.1.nip.io:9081", "refused"],
    ["localhost.evil.example", "refused"],
    ["edge.lan.evil.example", "refused"],
    ["bad host", "refused"],
  ];
  test.each(CASES)("Host: %s -> %s", (host, want) => {
    expect(verdict(policy(), { Host: host })).toBe(want);
  });

  test("a foreign Host is refused on open routes too, with eKuiper's body", async () => {
    const a = policy().admit(new Request("http://x/ping", { headers: { Host: "evil.example" } }), true);
    expect(a.refused?.status).toBe(403);
    expect(await a.refused?.text()).toBe('{"error":1000,"message":"request refused: host \\"evil.example\\" is not an allowed host (basic.allowedHosts)"}\n');
  });

  test("basic.allowedHosts adds names (case and trailing dot ignored); * accepts any", () => {
    expect(verdict(policy([], ["Floe.Example."]), { Host: "floe.example:9081" })).toBe("-");
    expect(verdict(policy([], ["floe.example"]), { Host: "sub.floe.example" })).toBe("refused");
    expect(verdict(policy([], ["*"]), { Host: "evil.example" })).toBe("-");
  });
});

describe("Origin", () => {
  const own = { Host: "127.0.0.1:9081" };
  const CASES: [string, Record<string, string>, string][] = [
    ["no Origin (curl, the kuiper verbs, a server-side proxy)", {}, "-"],
    ["the server's own origin", { Origin: "http://127.0.0.1:9081" }, "http://127.0.0.1:9081"],
    ["the own origin with the default port spelled out", { Host: "localhost", Origin: "http://localhost:80" }, "http://localhost"],
    ["another port of the same host", { Origin: "http://127.0.0.1:8080" }, "refused"],
    ["another scheme", { Origin: "https://127.0.0.1:9081" }, "refused"],
    ["a foreign site", { Origin: "https://evil.example" }, "refused"],
    ["Origin: null", { Origin: "null" }, "refused"],
    ["an Origin that is not one", { Origin: "garbage" }, "refused"],
    ["no Origin, Sec-Fetch-Site: cross-site (an <img>)", { "Sec-Fetch-Site": "cross-site" }, "refused"],
    ["no Origin, Sec-Fetch-Site: same-site", { "Sec-Fetch-Site": "same-site" }, "refused"],
    ["no Origin, Sec-Fetch-Site: same-origin", { "Sec-Fetch-Site": "same-origin" }, "-"],
    ["no Origin, Sec-Fetch-Site: none (typed in the address bar)", { "Sec-Fetch-Site": "none" }, "-"],
  ];
  test.each(CASES)("guarded route, %s", (_name, headers, want) => {
    expect(verdict(policy(), { ...own, ...headers })).toBe(want);
  });

  test("an open route answers every origin with *", () => {
    for (const o of ["https://evil.example", "null"]) expect(verdict(policy(), { ...own, Origin: o }, true)).toBe("*");
    expect(verdict(policy(), { ...own, "Sec-Fetch-Site": "cross-site" }, true)).toBe("-");
  });

  test("basic.allowedOrigins admits the listed origins by their serialised form; * admits all with *", () => {
    const p = policy(["HTTPS://Dash.Example:443", "http://10.0.0.5:3000"]);
    expect(verdict(p, { ...own, Origin: "https://dash.example" })).toBe("https://dash.example");
    expect(verdict(p, { ...own, Origin: "http://10.0.0.5:3000" })).toBe("http://10.0.0.5:3000");
    expect(verdict(p, { ...own, Origin: "http://dash.example" })).toBe("refused");
    const any = policy(["*"]);
    expect(verdict(any, { ...own, Origin: "https://evil.example" })).toBe("*");
    expect(verdict(any, { ...own, Origin: "null" })).toBe("*");
    expect(verdict(any, { ...own, "Sec-Fetch-Site": "cross-site" })).toBe("*");
  });

  test("behind TLS the own origin is https", () => {
    expect(verdict(policy([], [], "https"), { ...own, Origin: "https://127.0.0.1:9081" })).toBe("https://127.0.0.1:9081");
    expect(verdict(policy([], [], "https"), { ...own, Origin: "http://127.0.0.1:9081" })).toBe("refused");
  });

  test("an allow-list entry that is not an origin is a configuration error naming it", () => {
    expect(() => policy(["dash.example"])).toThrow('invalid basic.allowedOrigins entry "dash.example": want scheme://host[:port] or *');
    expect(() => policy(["null"])).toThrow('invalid basic.allowedOrigins entry "null"');
  });
});
