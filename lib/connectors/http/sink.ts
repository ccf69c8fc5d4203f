/**
 * The REST sink (rules-and-sinks.md §11.5): one HTTP request per payload, through the
 * private-network guard like httppull (loopback/private targets need `basic.enablePrivateNet`). Transport
 * failures (refused, reset, timeout, DNS) are IO errors — retried with the cache or
 * resendInterval — and non-2xx answers are not. Configured headers are sent on every request,
 * templates rendered per payload (floe does not reproduce eKuiper's header-dropping quirk).
 */
import { EngineError, IoError } from "../../errors.ts";
import { BODY_TYPES } from "./client.ts";
import { guardedFetch, type NetGuard } from "../../net/guard.ts";
import { PropReader, type Props } from "../../config/props.ts";
import type { SinkConnector, SinkContext, SinkItem } from "../../sink/connector.ts";

interface RestConf {
  url: string;
  method: string;
  bodyType: string;
  timeout: number;
  headers: Record<string, string>;
  responseType: "code" | "body";
  debugResp: boolean;
  compression: string;
  fileFieldName: string;
  formData: Record<string, string>;
}

function parse(props: Props): RestConf {
  const r = new PropReader(props);
  const method = r.str("method", "GET").toUpperCase() || "GET";
  if (!["GET", "POST", "PUT", "DELETE", "PATCH", "HEAD"].includes(method) && !method.includes("{{")) throw new EngineError(`Not supported HTTP method ${method}.`);
  const bodyType = r.str("bodyType", method === "GET" || method === "HEAD" ? "none" : "json").toLowerCase();
  if (!(bodyType in BODY_TYPES) && !bodyType.includes("{{")) throw new EngineError(`Invalid body type value ${bodyType}.`);
  const format = r.str("format", "json").toLowerCase();
  if (bodyType === "json" && format !== "json") throw new EngineError("format must be json if bodyType is json");
  if (bodyType === "form" && format !== "urlencoded") throw new EngineError("format must be urlencoded if bodyType is form");
  const responseType = r.str("responseType", "code") as RestConf["responseType"];
  if (responseType !== "code" && responseType !== "body") throw new EngineError(`Invalid response type value ${responseType}.`);
  const timeout = r.duration("timeout", 5000);
  if (timeout < 0) throw new EngineError("timeout must be positive");
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(r.obj("headers") ?? {})) headers[k] = String(v);
  const formData: Record<string, string> = {};
  for (const [k, v] of Object.entries(r.obj("formData") ?? {})) formData[k] = String(v);
  return {
    url: r.str("url", "http://localhost") || "http://localhost",
    method,
    bodyType,
    timeout,
    headers,
    responseType,
    debugResp: r.bool("debugResp"),
    compression: r.str("compression", "").toLowerCase(),
    fileFieldName: r.str("fileFieldName", "file") || "file",
    formData,
  };
}

function recoverable(e: unknown): boolean {
  const code = (e as { code?: string }).code ?? "";
  const name = (e as { name?: string }).name ?? "";
  return (
    name === "TimeoutError" ||
    name === "AbortError" ||
    /ECONNREFUSED|ECONNRESET|ETIMEDOUT|EPIPE|ENOTFOUND|EAI_AGAIN|ConnectionRefused|ConnectionClosed|FailedToOpenSocket|UND_ERR/.test(code + " " + String((e as Error).message))
  );
}

export class RestSink implements SinkConnector {
  readonly bytes = true;
  private readonly c: RestConf;
  private readonly aborts = new Set<AbortController>();

  constructor(
    props: Props,
    private readonly guard: NetGuard,
  ) {
    this.c = parse(props);
  }

  open(ctx: SinkContext): void {
    ctx.status.connected();
  }

  async send(item: SinkItem): Promise<void> {
    const p = item.props;
    const c = this.c;
    const url = typeof p?.url === "string" ? p.url : c.url;
    const method = (typeof p?.method === "string" ? p.method : c.method).toUpperCase();
    const bodyType = typeof p?.bodyType === "string" ? p.bodyType.toLowerCase() : c.bodyType;
    const headers: Record<string, string> = {};
    const hv = p && typeof p.headers === "object" && p.headers ? (p.headers as Record<string, unknown>) : c.headers;
    for (const [k, v] of Object.entries(hv)) headers[k] = String(v);
    const payload = item.payload as string | Uint8Array;
    let body: string | Uint8Array | FormData | undefined;
    if (bodyType === "formdata") {
      const fd = new FormData();
      for (const [k, v] of Object.entries(c.formData)) fd.append(k, v);
      fd.append(c.fileFieldName, new Blob([payload as Uint8Array<ArrayBuffer>]), "data");
      body = fd;
    } else if (bodyType !== "none") {
      body = payload;
      const ct = BODY_TYPES[bodyType];
      if (ct && !Object.keys(headers).some((h) => h.toLowerCase() === "content-type")) headers["Content-Type"] = ct;
    }
    if (c.compression) headers["Content-Encoding"] = c.compression;
    const ac = new AbortController();
    this.aborts.add(ac);
    const timer = c.timeout > 0 ? setTimeout(() => ac.abort(new DOMException("timeout", "TimeoutError")), c.timeout) : undefined;
    let res: Response;
    try {
      res = await guardedFetch(url, { method, headers, body, signal: ac.signal }, this.guard);
    } catch (e) {
      const text = `rest sink fails to send out the data:err=${(e as Error).message} recoverAble=${recoverable(e)} method=${method} path="${url}"`;
      if (recoverable(e)) throw new IoError(text, { cause: e });
      throw new EngineError(text, undefined, { cause: e });
    } finally {
      clearTimeout(timer);
      this.aborts.delete(ac);
    }
    const text = c.debugResp || res.status < 200 || res.status >= 300 || c.responseType === "body" ? await res.text() : (await res.arrayBuffer(), "");
    if (res.status < 200 || res.status >= 300)
      throw new EngineError(`parse response error: response code error: ${res.status}. | method=${method} path="${url}" status=${res.status} response_body="${c.debugResp ? text : ""}"`);
    if (c.responseType === "body") {
      try {
        const v = JSON.parse(text) as unknown;
        const list = Array.isArray(v) ? v : [v];
        for (const x of list) {
          const code = (x as { code?: unknown }).code;
          if (typeof code === "number" && (code < 200 || code >= 300)) throw new EngineError(`parse response error: response code error: ${code}`);
        }
      } catch (e) {
        if (e instanceof EngineError) throw e;
      }
    }
  }

  close(): void {
    for (const a of this.aborts) a.abort();
  }
}
