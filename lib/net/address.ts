/**
 * IP addresses as bytes for the private-network guard (guard.ts): every textual spelling of an
 * address parses to the same 16 bytes, classified as Go's net.IP tests do (plus a few more ranges)
 * and printed as Go prints it.
 */

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
