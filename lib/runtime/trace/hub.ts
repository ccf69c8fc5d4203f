/**
 * The process's trace collector (rest-api.md §15): every traced rule hands its finished spans
 * here; they go to the local store — in memory, or in sqlite in the data dir when
 * `enableLocalStorage` is on (eKuiper's meaning of the key) — and to the OTLP collector while
 * remote collection is on (kuiper.yaml `openTelemetry`, or switched at run time by `POST /tracer`).
 */
import type { OpenTelemetrySettings } from "../../config/kuiper.ts";
import type { NetGuard } from "../../net/guard.ts";
import type { ByteBudget } from "../../core/byte-budget.ts";
import { parseTraceparent } from "./ids.ts";
import { OtlpExporter } from "./otlp.ts";
import { epochMs, Span, type SpanSink } from "./span.ts";
import { SqliteTraceStore } from "./sqlite-store.ts";
import { LocalTraceStore, type TraceNode } from "./store.ts";

/**
 * What `GET /trace/**` asks the local store; both stores keep at most `localTraceCapacity` traces
 * and at most `localTraceMaxBytes` of spans in memory (the sqlite one: spans not yet written).
 */
export interface TraceStore {
  add(span: Span): void;
  /** What the store holds in memory against `localTraceMaxBytes`. */
  readonly budget: ByteBudget;
  /** Trace ids of `ruleId`, most recent first; `limit` ≤ 0 means all. */
  traceIds(ruleId: string, limit: number): string[] | Promise<string[]>;
  tree(traceId: string): TraceNode | undefined | Promise<TraceNode | undefined>;
  close?(): void;
}

export class TraceHub implements SpanSink {
  readonly store: TraceStore;
  private exporter: OtlpExporter | undefined;
  private serviceName: string;

  /** `dataDir` holds `trace.db` when `enableLocalStorage` is on. */
  constructor(
    settings: OpenTelemetrySettings,
    /** The owner's outbound client: the exporter's requests go through it. */
    private readonly outbound: NetGuard,
    private readonly log: (line: string) => void,
    dataDir: string,
  ) {
    this.serviceName = settings.serviceName;
    this.store = settings.enableLocalStorage
      ? new SqliteTraceStore(dataDir, settings.localTraceCapacity, settings.localTraceMaxBytes)
      : new LocalTraceStore(settings.localTraceCapacity, settings.localTraceMaxBytes);
    if (settings.enableRemoteCollector) this.exporter = new OtlpExporter(settings.remoteEndpoint, settings.serviceName, outbound, log);
  }

  record(span: Span): void {
    this.store.add(span);
    this.exporter?.add(span);
  }

  /**
   * A REST request that carried a `traceparent`: its server span, named after the URL path
   * (rest-api.md §1.5), sent to the collector only (it belongs to no rule). Undefined when remote
   * collection is off or the header is not a valid trace context.
   */
  requestSpan(path: string, traceparent: string | null): Span | undefined {
    if (this.exporter === undefined || traceparent === null) return undefined;
    const remote = parseTraceparent(traceparent);
    return remote ? new Span(path, remote.traceId, null, remote.spanId, "", null) : undefined;
  }

  endRequestSpan(span: Span): void {
    span.end = epochMs();
    this.exporter?.add(span);
  }

  /** The OTLP exporter while remote collection is on. */
  get remote(): OtlpExporter | undefined {
    return this.exporter;
  }

  /**
   * `POST /tracer`: `start` (re)points remote collection at `collectorUrl` under `serviceName`;
   * anything else stops it. The old exporter sends what it holds.
   */
  setRemote(start: boolean, collectorUrl: string, serviceName: string): void {
    const old = this.exporter;
    this.exporter = undefined;
    if (old) void old.close();
    if (!start) return;
    if (serviceName) this.serviceName = serviceName;
    this.exporter = new OtlpExporter(collectorUrl, this.serviceName, this.outbound, this.log);
  }

  /** Shutdown: the store is closed; what the exporter holds is sent, waiting at most a second for the collector. */
  async close(): Promise<void> {
    this.store.close?.();
    const e = this.exporter;
    this.exporter = undefined;
    if (!e) return;
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([e.close(), new Promise<void>((r) => (timer = setTimeout(r, 1000)))]);
    clearTimeout(timer);
  }
}
