/**
 * The one request-origin policy of floe's HTTP listeners: the REST and CLI ports, the web console
 * and the data server's websocket endpoints (THREAT-MODEL "origin"). Two checks:
 *
 * - `Host` against an allow-list refuses DNS rebinding: a page of `evil.example` whose name the
 *   attacker re-points to 127.0.0.1 reaches the listener as a same-origin caller, but its requests
 *   carry `Host: evil.example`. Accepted: `localhost` and `*.localhost` (they never leave the
 *   machine), any IP address (a browser sends the address it connected to, which a rebinding page
 *   cannot choose), the listen addresses, this machine's host name and `basic.allowedHosts`.
 * - The caller's origin against the server's own and `basic.allowedOrigins`, for every route not
 *   marked open: a browser names the page that made a request in `Origin` (and `Sec-Fetch-Site`
 *   says `cross-site` where it sends no `Origin`, as for an `<img>` load); a client that sends
 *   neither (curl, the kuiper verbs, eKuiper Manager's server-side proxy) is not a browser page and
 *   passes. `Origin: null` (sandboxed frames, `file:` pages) passes only an allow-list of `*`.
 */
import { hostname } from "node:os";
import type { BasicSettings } from "../config/kuiper.ts";
import { EngineError, ErrCode } from "../errors.ts";
import { goQuote } from "../value/values.ts";
import { parseIp } from "./address.ts";

/** `basic.allowedOrigins` and `basic.allowedHosts`; `*` in either allows any. */
export type OriginSettings = Pick<BasicSettings, "allowedOrigins" | "allowedHosts">;

export interface OriginPolicyOptions extends OriginSettings {
  /** The listener's scheme: with `Host` it makes the server's own origin. */
  readonly scheme: "http" | "https";
  /** The addresses the listeners bind (`basic.restIp`, `basic.ip`, `source.httpServerIp`). */
  readonly bindHosts: readonly string[];
}

/**
 * What a request may do: refused (the response to send), or admitted with the
 * `Access-Control-Allow-Origin` to answer its `Origin` with (undefined: it sent none).
 */
export type Admission = { readonly refused: Response } | { readonly refused?: undefined; readonly allowOrigin: string | undefined };

const ADMITTED: Admission = { allowOrigin: undefined };
const ANY: Admission = { allowOrigin: "*" };

/** The host name of a `Host` value (lower case, no port, no brackets, no trailing dot); undefined when it is not one. */
function hostName(host: string): string | undefined {
  try {
    const h = new URL(`http://${host}`).hostname;
    return (h.startsWith("[") ? h.slice(1, -1) : h).replace(/\.$/, "");
  } catch {
    return undefined;
  }
}

/** The serialised origin of a URL (`https://a.example:8443`), undefined when it has none. */
function originOf(url: string): string | undefined {
  try {
    const o = new URL(url).origin;
    return o === "null" ? undefined : o;
  } catch {
    return undefined;
  }
}

/** eKuiper's error body (`{"error":1000,"message":…}`) with 403. */
function refusal(message: string): Admission {
  const headers = { "Content-Type": "text/plain; charset=utf-8", "X-Content-Type-Options": "nosniff" };
  return { refused: new Response(`{"error":${ErrCode.undefined},"message":${goQuote(message)}}\n`, { status: 403, headers }) };
}

export class OriginPolicy {
  private readonly anyHost: boolean;
  private readonly hosts: ReadonlySet<string>;
  private readonly anyOrigin: boolean;
  private readonly origins: ReadonlySet<string>;

  /** Throws a confKey error naming an allow-list entry that is not an origin. */
  constructor(private readonly o: OriginPolicyOptions) {
    this.anyHost = o.allowedHosts.includes("*");
    this.hosts = new Set([...o.allowedHosts, ...o.bindHosts, hostname()].map((h) => h.toLowerCase().replace(/\.$/, "")));
    this.anyOrigin = o.allowedOrigins.includes("*");
    this.origins = new Set(
      o.allowedOrigins
        .filter((x) => x !== "*")
        .map((x) => {
          const origin = originOf(x);
          if (!origin) throw new EngineError(`invalid basic.allowedOrigins entry ${JSON.stringify(x)}: want scheme://host[:port] or *`, ErrCode.confKey);
          return origin;
        }),
    );
  }

  /**
   * Checks one request. `open`: the route serves nothing sensitive (`/ping`, the console's page),
   * so any origin may read it and gets `*`; every other route admits only the server's own origin,
   * the allow-list, and callers that are not browser pages.
   */
  admit(req: Request, open: boolean): Admission {
    const host = req.headers.get("Host") ?? new URL(req.url).host;
    const name = hostName(host);
    if (name === undefined || !this.hostAllowed(name))
      return refusal(`request refused: host ${goQuote(host)} is not an allowed host (basic.allowedHosts)`);
    const origin = req.headers.get("Origin");
    if (origin === null) {
      const site = req.headers.get("Sec-Fetch-Site");
      if (open || (site !== "cross-site" && site !== "same-site")) return ADMITTED;
      if (this.anyOrigin) return ANY;
      return refusal(`request refused: a ${site} request without an Origin is not allowed (basic.allowedOrigins)`);
    }
    if (open || this.anyOrigin) return ANY;
    const normal = originOf(origin);
    if (normal !== undefined && (normal === originOf(`${this.o.scheme}://${host}`) || this.origins.has(normal))) return { allowOrigin: normal };
    return refusal(`request refused: origin ${goQuote(origin)} is not an allowed origin (basic.allowedOrigins)`);
  }

  private hostAllowed(name: string): boolean {
    return this.anyHost || parseIp(name) !== undefined || name === "localhost" || name.endsWith(".localhost") || this.hosts.has(name);
  }
}
