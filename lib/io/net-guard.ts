/**
 * The private-network guard on outbound HTTP(S) connections to user-supplied URLs (httppull source
 * and lookup, REST sink, `file` URLs of uploads and imports). Unless `basic.enablePrivateNet`, a
 * request resolves its host once, refuses it when any resolved address is loopback, private,
 * link-local, unspecified or shared (`ip <ip> is in internal network`), then connects to exactly the
 * address it checked — the Host header and the TLS name (SNI, certificate) stay the URL's — and
 * follows redirects itself so that every hop is checked the same way.
 */
import { lookup as dnsLookup } from "node:dns/promises";
import { EngineError } from "../errors.ts";

/** Host name → its addresses, in the order to try them. */
export type Resolver = (host: string) => Promise<readonly string[]>;

/** What opens the connection (Bun's fetch; tests observe the pinned request through it). */
export type FetchFn = (url: string, init: BunFetchRequestInit) => Promise<Response>;

export interface NetGuard {
  /** `basic.enablePrivateNet`: nothing is checked, fetch resolves and follows redirects itself. */
  readonly allowPrivate: boolean;
  readonly resolve: Resolver;
  readonly fetch: FetchFn;
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

export function createNetGuard(o: { allowPrivate?: boolean; resolve?: Resolver; fetch?: FetchFn } = {}): NetGuard {
  return { allowPrivate: o.allowPrivate === true, resolve: o.resolve ?? systemResolve, fetch: o.fetch ?? ((url, init) => fetch(url, init)), _checked: new Map() };
}

// ---------------------------------------------------------------------------------------------
// Addresses

/** Parses a dotted-quad IPv4 address (the only IPv4 spelling left after URL parsing or getaddrinfo). */
function parseIpv4(s: string, out: Uint8Array, at: number): boolean {
  const parts = s.split(".");
  if (parts.length !== 4) return false;
  for (let i = 0; i < 4; i++) {
    const p = parts[i]!;
    if (!/^\d{1,3}$/.test(p)) return false;
    const n = Number(p);
    if (n > 255) return false;
    out[at + i] = n;
  }
  return true;
}

/**
 * An IP address as 16 bytes (IPv4 as `::ffff:a.b.c.d`, as Go's net.IP holds it), or undefined when
 * `text` is not an address. Accepts every RFC 4291 spelling (`::`, leading zeros, embedded IPv4,
 * a `%zone`), brackets around IPv6.
 */
export function parseIp(text: string): Uint8Array | undefined {
  let s = text.startsWith("[") && text.endsWith("]") ? text.slice(1, -1) : text;
  const out = new Uint8Array(16);
  if (!s.includes(":")) {
    out[10] = 0xff;
    out[11] = 0xff;
    return parseIpv4(s, out, 12) ? out : undefined;
  }
  const zone = s.indexOf("%");
  if (zone >= 0) s = s.slice(0, zone);
  const gap = s.indexOf("::");
  if (gap >= 0 && s.indexOf("::", gap + 1) >= 0) return undefined;
  const head = gap >= 0 ? s.slice(0, gap) : s;
  const tail = gap >= 0 ? s.slice(gap + 2) : "";
  const groups = (part: string): number[] | undefined => {
    if (part === "") return [];
    const g: number[] = [];
    const items = part.split(":");
    for (let i = 0; i < items.length; i++) {
      const it = items[i]!;
      if (i === items.length - 1 && it.includes(".")) {
        const v4 = new Uint8Array(4);
        if (!parseIpv4(it, v4, 0)) return undefined;
        g.push((v4[0]! << 8) | v4[1]!, (v4[2]! << 8) | v4[3]!);
      } else {
        if (!/^[0-9a-fA-F]{1,4}$/.test(it)) return undefined;
        g.push(parseInt(it, 16));
      }
    }
    return g;
  };
  const h = groups(head);
  const t = groups(tail);
  if (!h || !t) return undefined;
  if (gap < 0 ? h.length !== 8 : h.length + t.length > 7) return undefined;
  const all = gap < 0 ? h : [...h, ...new Array<number>(8 - h.length - t.length).fill(0), ...t];
  for (let i = 0; i < 8; i++) {
    out[2 * i] = all[i]! >> 8;
    out[2 * i + 1] = all[i]! & 0xff;
  }
  return out;
}

function hasPrefix(ip: Uint8Array, prefix: readonly number[]): boolean {
  for (let i = 0; i < prefix.length; i++) if (ip[i] !== prefix[i]) return false;
  return true;
}

function isZero(ip: Uint8Array, from: number, to: number): boolean {
  for (let i = from; i < to; i++) if (ip[i] !== 0) return false;
  return true;
}

/** `::ffff:0:0/96`: the IPv4 address itself (Go's To4). */
function isMapped(ip: Uint8Array): boolean {
  return isZero(ip, 0, 10) && ip[10] === 0xff && ip[11] === 0xff;
}

function isPrivateV4(a: number, b: number): boolean {
  return (
    a === 0 || // 0.0.0.0/8 "this network"
    a === 127 ||
    a === 10 ||
    (a === 172 && b >= 16 && b <= 31) ||
    (a === 192 && b === 168) ||
    (a === 169 && b === 254) ||
    (a === 100 && b >= 64 && b <= 127) // 100.64/10 shared (CGNAT; some clouds' metadata services)
  );
}

/**
 * The IPv4 address an IPv6 address carries and reaches, by byte offset: mapped (`::ffff:a.b.c.d`),
 * SIIT (`::ffff:0:a.b.c.d`), deprecated compatible (`::a.b.c.d`), NAT64 (`64:ff9b::/96`,
 * `64:ff9b:1::/48`) and 6to4 (`2002:AABB:CCDD::/16`); -1 when none.
 */
function embeddedV4(ip: Uint8Array): number {
  if (isMapped(ip)) return 12;
  if (isZero(ip, 0, 8) && ip[8] === 0xff && ip[9] === 0xff && ip[10] === 0 && ip[11] === 0) return 12;
  if (isZero(ip, 0, 12) && !(isZero(ip, 12, 15) && ip[15]! <= 1)) return 12;
  if (hasPrefix(ip, [0, 0x64, 0xff, 0x9b]) && (isZero(ip, 4, 12) || (ip[4] === 0 && ip[5] === 1))) return 12;
  if (hasPrefix(ip, [0x20, 0x02])) return 2;
  return -1;
}

/**
 * Loopback, private, link-local, unspecified or shared: Go's `IsLoopback || IsPrivate ||
 * IsLinkLocalUnicast || IsUnspecified` (eKuiper's test) plus 0/8, 100.64/10, site-local fec0::/10
 * and IPv4 addresses embedded in IPv6 (mapped, compatible, NAT64, 6to4). Accepts any spelling
 * `parseIp` does; a string that is not an address is not private.
 */
export function isPrivateIp(ip: string | Uint8Array): boolean {
  const b = typeof ip === "string" ? parseIp(ip) : ip;
  if (!b) return false;
  const v4 = embeddedV4(b);
  if (v4 >= 0) return isPrivateV4(b[v4]!, b[v4 + 1]!);
  if (isZero(b, 0, 15) && b[15]! <= 1) return true; // :: and ::1
  if ((b[0]! & 0xfe) === 0xfc) return true; // fc00::/7 unique local
  if (b[0] === 0xfe && (b[1]! & 0xc0) === 0x80) return true; // fe80::/10 link-local
  if (b[0] === 0xfe && (b[1]! & 0xc0) === 0xc0) return true; // fec0::/10 site-local (deprecated)
  return false;
}

/** Go's net.IP String: mapped addresses as dotted IPv4, others as RFC 5952 IPv6. */
export function formatIp(b: Uint8Array): string {
  if (isMapped(b)) return `${b[12]}.${b[13]}.${b[14]}.${b[15]}`;
  const g: number[] = [];
  for (let i = 0; i < 8; i++) g.push((b[2 * i]! << 8) | b[2 * i + 1]!);
  let best = -1;
  let bestLen = 1;
  for (let i = 0; i < 8; ) {
    if (g[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && g[j] === 0) j++;
    if (j - i > bestLen) {
      best = i;
      bestLen = j - i;
    }
    i = j;
  }
  const hex = (xs: number[]) => xs.map((x) => x.toString(16)).join(":");
  return best < 0 ? hex(g) : `${hex(g.slice(0, best))}::${hex(g.slice(best + bestLen))}`;
}

/** The refusal, byte-identical to the old check and to eKuiper. */
function internal(b: Uint8Array): EngineError {
  return new EngineError(`ip ${formatIp(b)} is in internal network`);
}

// ---------------------------------------------------------------------------------------------
// Connections

function hostOf(u: URL): string {
  const h = u.hostname;
  return h.startsWith("[") ? h.slice(1, -1) : h;
}

/**
 * The addresses of the URL's host, each checked: resolved once (an IP literal is its own
 * address; undefined then). Throws `ip <ip> is in internal network` when any of them is refused.
 */
async function checkedHosts(u: URL, guard: NetGuard): Promise<readonly string[] | undefined> {
  const host = hostOf(u);
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

/** Parses an http(s) URL; Go's client error for any other scheme. */
function httpUrl(url: string | URL, base?: URL): URL {
  const u = new URL(url, base);
  if (u.protocol !== "http:" && u.protocol !== "https:") throw new EngineError(`unsupported protocol scheme "${u.protocol.slice(0, -1)}"`);
  return u;
}

/** Refuses the URL now (at connect time of a source) when its host is refused; nothing is sent. */
export async function checkUrl(url: string, guard: NetGuard): Promise<void> {
  if (guard.allowPrivate) return;
  await checkedHosts(httpUrl(url), guard);
}

/** Connection-level failures after which the next resolved address is tried. */
function unreachable(e: unknown): boolean {
  const code = String((e as { code?: unknown }).code ?? "");
  return /^(ConnectionRefused|FailedToOpenSocket|ECONNREFUSED|EHOSTUNREACH|ENETUNREACH|NetworkUnreachable|HostUnreachable)$/.test(code);
}

/** One request (no redirect following) to exactly the checked addresses of `u`'s host. */
async function pinnedFetch(u: URL, init: BunFetchRequestInit, guard: NetGuard): Promise<Response> {
  const hosts = await checkedHosts(u, guard);
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
