/**
 * The one log line of a failed connection attempt, for every connector that retries: what it
 * tried, the kind of failure a person acts on (refused, DNS, TLS, auth, timeout, unreachable), the
 * connector's own text (Go's socket texts, go-net-error.ts), and when the next attempt is due.
 * Operators grep for `Failed to connect`.
 */

/** The kind of failure a connector's error text names, or "error" when it is none of the known ones. */
export function failureKind(text: string): string {
  if (/connection refused/i.test(text)) return "refused";
  if (/lookup .*(no such host|server misbehaving)|getaddrinfo|ENOTFOUND|EAI_AGAIN/i.test(text)) return "DNS";
  if (/\btls\b|x509|certificate|handshake/i.test(text)) return "TLS";
  if (/user name or password|not authori[sz]ed|bad credentials|authentication|authorization violation/i.test(text)) return "auth";
  if (/timeout|timed out/i.test(text)) return "timeout";
  if (/no route to host|network is unreachable/i.test(text)) return "unreachable";
  if (/connection reset|broken pipe/i.test(text)) return "reset";
  return "error";
}

/** `Failed to connect to mqtt://h:1883 (refused): <text>; next retry in 400 ms at <ISO time>`. */
export function connectFailureLine(target: string, text: string, retryMs: number, now = Date.now()): string {
  return `Failed to connect to ${target} (${failureKind(text)}): ${text}; next retry in ${retryMs} ms at ${new Date(now + retryMs).toISOString()}`;
}
