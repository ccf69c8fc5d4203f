/**
 * The private-network guard of every HTTP-class connection floe opens to a user-supplied address:
 * HTTP(S) requests (httppull source and lookup, REST sink, `file` URLs of uploads and imports, the
 * OTLP trace exporter) and websocket clients (websocket.ts). Unless `basic.enablePrivateNet`, a
 * connection resolves its host once, refuses it when any resolved address is loopback, private,
 * link-local, unspecified or shared (`ip <ip> is in internal network`), then connects to exactly the
 * address it checked — the Host header and the TLS name (SNI, certificate) stay the URL's — and
 * follows redirects itself so that every hop is checked the same way.
 */
import { lookup as dnsLookup } from "node:dns/promises";
import { EngineError } from "../errors.ts";
import { formatIp, isPrivateIp, parseIp } from "./address.ts";

/** Host name → its addresses, in the order to try them. */
export type Resolver = (host: string) => Promise<readonly string[]>;

/** What sends a request (Bun's fetch; tests observe and route the pinned request through it). */
export type FetchFn = (url: string, init: BunFetchRequestInit) => Promise<Response>;

/** What opens a websocket (Bun's WebSocket; tests route it like FetchFn). */
export type WebSocketFn = (url: string, init: Bun.WebSocketOptions) => WebSocket;

/** How the guard reaches the network; every part defaults to the real one. */
export interface Transport {
  readonly resolve?: Resolver;
  readonly fetch?: FetchFn;
  readonly webSocket?: WebSocketFn;
}

export interface NetGuard {
  /** `basic.enablePrivateNet`: nothing is checked, fetch resolves and follows redirects itself. */
  readonly allowPrivate: boolean;
  readonly resolve: Resolver;
  readonly fetch: FetchFn;
  readonly webSocket: WebSocketFn;
  /** Host → its checked addresses, for `RESOLVE_TTL_MS` (connections still go only to these). */
  readonly _checked: Map<string, Checked>;
}

interface Checked {
  /** Formatted for a URL host (IPv6 in brackets), in the order to try them. */
  readonly hosts: readonly string[];
  readonly until: number;
}

/**
 * How long a name's checked addresses are reused, as Bun's own DNS cache does (30 s): a lookup
 * through getaddrinfo costs ~60 µs even when cached, on every REST sink request. Safe, since a
 * connection only ever goes to an address that was checked.
 */
export const RESOLVE_TTL_MS = 30_000;
const MAX_CACHED_HOSTS = 256;

/** getaddrinfo through Bun's cached lookup; IPv4 first, as the old check ordered them. */
export const systemResolve: Resolver = async (host) => {
  const all = await dnsLookup(host, { all: true });
  return all.sort((x, y) => x.family - y.family).map((a) => a.address);
};

/** The guard of one owner (a daemon, a pipe run); `allowPrivate` is `basic.enablePrivateNet`. */
export function createNetGuard(o: Transport & { allowPrivate?: boolean } = {}): NetGuard {
  return {
    allowPrivate: o.allowPrivate === true,
    resolve: o.resolve ?? systemResolve,
    fetch: o.fetch ?? ((url, init) => fetch(url, init)),
    webSocket: o.webSocket ?? ((url, init) => new WebSocket(url, init)),
    _checked: new Map(),
  };
}

/** The refusal, byte-identical to the old check and to eKuiper. */
function internal(b: Uint8Array): EngineError {
  return new EngineError(`ip ${formatIp(b)} is in internal network`);
}

/** The URL's host name, IPv6 without brackets. */
export function hostOf(u: URL): string {
  const h = u.hostname;
  return h.startsWith("[") ? h.slice(1, -1) : h;
}

/**
 * The addresses of `host` (a URL's host name, IPv6 without brackets), each checked: resolved once
 * (an IP literal is its own address; undefined then). Throws `ip <ip> is in internal network` when
 * any of them is refused.
 */
export async function checkedHosts(host: string, guard: NetGuard): Promise<readonly string[] | undefined> {
  const lit = parseIp(host);
  if (lit) {
    if (!guard.allowPrivate && isPrivateIp(lit)) throw internal(lit);
    return undefined;
  }
  const now = Date.now();
  const hit = guard._checked.get(host);
  if (hit && hit.until > now) return hit.hosts;
  const texts = await guard.resolve(host);
  const hosts: string[] = [];
  for (const t of texts) {
    const b = parseIp(t);
    if (!b) throw new EngineError(`lookup ${host}: invalid address ${t}`);
    if (!guard.allowPrivate && isPrivateIp(b)) throw internal(b);
    const a = formatIp(b);
    hosts.push(a.includes(":") ? `[${a}]` : a);
  }
  if (hosts.length === 0) throw Object.assign(new Error(`lookup ${host}: no such host`), { code: "ENOTFOUND" });
  if (guard._checked.size >= MAX_CACHED_HOSTS) guard._checked.clear();
  guard._checked.set(host, { hosts, until: now + RESOLVE_TTL_MS });
  return hosts;
}

/** Parses a URL of one of `schemes`; Go's client error for any other scheme. */
export function schemeUrl(url: string | URL, schemes: readonly string[], base?: URL): URL {
  const u = new URL(url, base);
  if (!schemes.includes(u.protocol)) throw new EngineError(`unsupported protocol scheme "${u.protocol.slice(0, -1)}"`);
  return u;
}

const HTTP = ["http:", "https:"];

/** Parses an http(s) URL; Go's client error for any other scheme. */
function httpUrl(url: string | URL, base?: URL): URL {
  return schemeUrl(url, HTTP, base);
}

/**
 * Refuses an http(s) or ws(s) URL now (when a connector opens, a collector is set) when its host is
 * refused; nothing is sent.
 */
export async function checkUrl(url: string, guard: NetGuard): Promise<void> {
  const u = schemeUrl(url, [...HTTP, "ws:", "wss:"]);
  if (guard.allowPrivate) return;
  await checkedHosts(hostOf(u), guard);
}

/**
 * The refusal of `url` (`ip <ip> is in internal network`, an invalid URL or scheme), or undefined
 * when the guard lets it through or its name does not resolve now (a transient failure: the
 * connection is retried, and checked again, later).
 */
export async function refusalOf(url: string, guard: NetGuard): Promise<Error | undefined> {
  try {
    await checkUrl(url, guard);
    return undefined;
  } catch (e) {
    return e instanceof EngineError || e instanceof TypeError ? e : undefined;
  }
}

/** Connection-level failures after which the next resolved address is tried. */
function unreachable(e: unknown): boolean {
  const code = String((e as { code?: unknown }).code ?? "");
  return /^(ConnectionRefused|FailedToOpenSocket|ECONNREFUSED|EHOSTUNREACH|ENETUNREACH|NetworkUnreachable|HostUnreachable)$/.test(code);
}

/** One request (no redirect following) to exactly the checked addresses of `u`'s host. */
async function pinnedFetch(u: URL, init: BunFetchRequestInit, guard: NetGuard): Promise<Response> {
  const hosts = await checkedHosts(hostOf(u), guard);
  if (!hosts) return guard.fetch(u.href, init);
  const headers = new Headers(init.headers);
  // The URL's host, unless the headers name one (then sent as configured, as without the guard).
  if (!headers.has("host")) headers.set("host", u.host);
  const tls = u.protocol === "https:" ? { ...init.tls, serverName: hostOf(u) } : init.tls;
  const target = new URL(u.href);
  for (let i = 0; ; i++) {
    target.hostname = hosts[i]!;
    try {
      return await guard.fetch(target.href, { ...init, headers, tls });
    } catch (e) {
      if (i + 1 >= hosts.length || !unreachable(e) || init.signal?.aborted) {
        guard._checked.delete(hostOf(u)); // resolve afresh next time
        throw e;
      }
    }
  }
}

/** Go's http.Client limit (eKuiper's client): 9 redirects are followed; fetch would follow 20. */
export const MAX_REDIRECTS = 10;

const CONTENT_HEADERS = ["content-type", "content-length", "content-encoding", "content-language", "content-location"];
/** Dropped on a cross-origin hop: credentials (fetch, Go) and a configured Host meant for the first origin. */
const ORIGIN_HEADERS = ["authorization", "proxy-authorization", "cookie", "www-authenticate", "host"];

/**
 * fetch through the guard. With `allowPrivate` it is plain fetch. Otherwise each hop resolves its
 * host once, checks every address and connects to a checked one; redirects (301/302/303/307/308)
 * are followed here as fetch would — 303, and 301/302 after POST, turn into a body-less GET;
 * 307/308 keep method and body; credentials are dropped on a cross-origin hop — at most
 * 9 times (the 10th: `stopped after 10 redirects`, Go's client). `redirect: "manual"` returns the 3xx.
 */
export async function guardedFetch(url: string | URL, init: BunFetchRequestInit, guard: NetGuard): Promise<Response> {
  let u = httpUrl(url);
  if (guard.allowPrivate) return guard.fetch(u.href, init);
  const mode = init.redirect ?? "follow";
  let method = (init.method ?? "GET").toUpperCase();
  let body = init.body;
  const headers = new Headers(init.headers);
  for (let hop = 0; ; hop++) {
    const res = await pinnedFetch(u, { ...init, method, body, headers, redirect: "manual" }, guard);
    const s = res.status;
    if (mode === "manual" || !(s === 301 || s === 302 || s === 303 || s === 307 || s === 308)) return res;
    const location = res.headers.get("location");
    const toGet = s === 303 ? method !== "GET" && method !== "HEAD" : (s === 301 || s === 302) && method === "POST";
    // A streamed body cannot be sent again: the 3xx is the answer (fetch fails there).
    if (location === null || (!toGet && body instanceof ReadableStream)) return res;
    await res.body?.cancel();
    if (mode === "error") throw new EngineError(`redirect to ${location} refused`);
    // Go's CheckRedirect: the 10th redirect is refused (the 10 requests made so far all redirected).
    if (hop + 1 >= MAX_REDIRECTS) throw new EngineError(`stopped after ${MAX_REDIRECTS} redirects`);
    const next = httpUrl(location, u);
    if (toGet) {
      method = "GET";
      body = undefined;
      for (const h of CONTENT_HEADERS) headers.delete(h);
    }
    if (next.origin !== u.origin) for (const h of ORIGIN_HEADERS) headers.delete(h);
    u = next;
  }
}
