/**
 * Websocket clients through the private-network guard (guard.ts): the host is resolved once and
 * checked, and the socket opens to exactly the checked address with the URL's name in the Host
 * header and as the TLS server name. A websocket handshake never follows a redirect (a 3xx fails
 * it), so one check covers the connection.
 */
import { checkedHosts, hostOf, schemeUrl, type NetGuard } from "./guard.ts";

export interface WebSocketInit {
  readonly headers: Readonly<Record<string, string>>;
}

/** Opens a ws(s) socket to `url`; rejects with `ip <ip> is in internal network` when refused. */
export async function openWebSocket(url: string, init: WebSocketInit, guard: NetGuard): Promise<WebSocket> {
  const u = schemeUrl(url, ["ws:", "wss:"]);
  const hosts = guard.allowPrivate ? undefined : await checkedHosts(hostOf(u), guard);
  if (!hosts) return guard.webSocket(u.href, { headers: { ...init.headers } });
  const headers: Record<string, string> = { ...init.headers };
  // The URL's host, unless the headers name one (then sent as configured, as without the guard).
  if (!Object.keys(headers).some((h) => h.toLowerCase() === "host")) headers.host = u.host;
  const target = new URL(u.href);
  target.hostname = hosts[0]!;
  const ws = guard.webSocket(target.href, u.protocol === "wss:" ? { headers, tls: { serverName: hostOf(u) } } : { headers });
  // A failed connection resolves afresh next time (the client reconnects with backoff).
  ws.addEventListener("error", () => guard._checked.delete(hostOf(u)), { once: true });
  return ws;
}
