/**
 * OTLP/HTTP export of spans (JSON encoding: `POST <endpoint>/v1/traces`, content type
 * `application/json`), used when a remote collector is enabled (`openTelemetry.enableRemoteCollector`
 * with `remoteEndpoint`, or `POST /tracer`). Spans are batched: one request in flight, a bounded
 * queue (new spans are dropped and counted when it is full), sent every second or once a batch is
 * full. A failing collector costs a log line a minute, never the rule. Requests go through the
 * owner's outbound client: a collector on a loopback/private address (from `POST /tracer` or
 * kuiper.yaml alike) is refused unless `basic.enablePrivateNet`, each request and redirect checked.
 */
import { errorText } from "../../errors.ts";
import { guardedFetch, refusalOf, type NetGuard } from "../../net/guard.ts";
import { unixNano, type Span } from "./span.ts";

const QUEUE = 4096;
const BATCH = 256;
const INTERVAL_MS = 1000;
const TIMEOUT_MS = 5000;
const LOG_EVERY_MS = 60_000;

/** `localhost:4318` → `http://localhost:4318/v1/traces` (eKuiper's endpoint is host:port, plain HTTP). */
export function tracesUrl(endpoint: string): string {
  let u = endpoint.trim();
  if (!/^https?:\/\//i.test(u)) u = "http://" + u;
  u = u.replace(/\/+$/, "");
  return u.endsWith("/v1/traces") ? u : u + "/v1/traces";
}

function attr(key: string, value: string): { key: string; value: { stringValue: string } } {
  return { key, value: { stringValue: value } };
}

/** One span in OTLP JSON (ids as hex, times as uint64 strings, SPAN_KIND_INTERNAL). */
function otlpSpan(s: Span): Record<string, unknown> {
  const out: Record<string, unknown> = {
    traceId: s.traceId,
    spanId: s.spanId,
    name: s.name,
    kind: 1,
    startTimeUnixNano: unixNano(s.start),
    endTimeUnixNano: unixNano(s.end),
    attributes: Object.entries(s.attributes).map(([k, v]) => attr(k, v)),
  };
  // A REST request's span belongs to no rule.
  if (s.ruleId) (out.attributes as unknown[]).unshift(attr("ruleID", s.ruleId));
  if (s.parentSpanId) out.parentSpanId = s.parentSpanId;
  if (s.links?.length) out.links = s.links.map((l) => ({ traceId: l.traceId, spanId: l.spanId }));
  const err = s.attributes.error;
  out.status = err === undefined ? { code: 0 } : { code: 2, message: err };
  return out;
}

/** The request body of one export: one resource (the service), one scope, the spans. */
export function otlpBody(serviceName: string, spans: readonly Span[]): string {
  return JSON.stringify({
    resourceSpans: [
      {
        resource: { attributes: [attr("service.name", serviceName)] },
        scopeSpans: [{ scope: { name: "floe" }, spans: spans.map(otlpSpan) }],
      },
    ],
  });
}

export class OtlpExporter {
  readonly url: string;
  private queue: Span[] = [];
  private timer: ReturnType<typeof setTimeout> | undefined;
  private inflight: Promise<void> | undefined;
  private lastLog = 0;
  /** Spans dropped: the queue was full, or the collector refused or could not be reached. */
  dropped = 0;
  /** Spans the collector accepted. */
  sent = 0;

  constructor(
    endpoint: string,
    readonly serviceName: string,
    private readonly guard: NetGuard,
    private readonly log: (line: string) => void,
  ) {
    this.url = tracesUrl(endpoint);
    // A refused collector is said at once, not only at the first export.
    void refusalOf(this.url, guard).then((refused) => refused && log(`trace export to ${this.url} refused: ${refused.message}`));
  }

  add(span: Span): void {
    if (this.queue.length >= QUEUE) {
      this.dropped++;
      return;
    }
    this.queue.push(span);
    if (this.queue.length >= BATCH) this.flushSoon(0);
    else this.flushSoon(INTERVAL_MS);
  }

  private flushSoon(ms: number): void {
    if (this.timer !== undefined) {
      if (ms > 0) return;
      clearTimeout(this.timer);
    }
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.flush();
    }, ms);
  }

  /** Sends everything queued, one batch at a time; resolves when the queue is empty (or the sends failed). */
  async flush(): Promise<void> {
    while (this.inflight) await this.inflight;
    while (this.queue.length > 0) {
      const batch = this.queue.length <= BATCH ? this.queue : this.queue.slice(0, BATCH);
      this.queue = this.queue.length <= BATCH ? [] : this.queue.slice(BATCH);
      this.inflight = this.send(batch);
      await this.inflight;
      this.inflight = undefined;
    }
  }

  private async send(batch: Span[]): Promise<void> {
    try {
      const init = { method: "POST", headers: { "Content-Type": "application/json" }, body: otlpBody(this.serviceName, batch), signal: AbortSignal.timeout(TIMEOUT_MS) };
      const res = await guardedFetch(this.url, init, this.guard);
      await res.arrayBuffer();
      if (!res.ok) throw new Error(`HTTP ${res.status}`);
      this.sent += batch.length;
    } catch (e) {
      this.dropped += batch.length;
      const now = Date.now();
      if (now - this.lastLog >= LOG_EVERY_MS) {
        this.lastLog = now;
        this.log(`trace export to ${this.url} failed (${batch.length} spans dropped): ${errorText(e)}`);
      }
    }
  }

  /** Stops the timer and sends what is queued (within the request timeout). */
  async close(): Promise<void> {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    await this.flush();
  }
}
