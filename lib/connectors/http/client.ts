/**
 * The HTTP client shared by the httppull source and the httppull lookup (rules-and-sinks.md §11.3):
 * property parsing with eKuiper's error texts, templates over states / OAuth tokens / lookup keys
 * in url, body and headers, requests through the private-network guard (outbound/guard.ts), OAuth access
 * and refresh, response decompression and decoding (`responseType` code or body).
 */
import { readFileSync } from "node:fs";
import { isAbsolute, join } from "node:path";
import { EngineError, errorText } from "../../errors.ts";
import { isObj, type Obj, type Value } from "../../value/values.ts";
import { DECOMPRESSIONS, decompressBytes } from "../../formats/decompress.ts";
import { decodeTupleJson } from "../../formats/json-tuple.ts";
import { checkUrl, guardedFetch, type NetGuard } from "../../net/guard.ts";
import { PropReader, type Props } from "../../config/props.ts";
import { compileTemplate, isTemplate, type CompiledTemplate } from "../../template/index.ts";

/** `bodyType` → Content-Type (none and formdata set none of their own). */
export const BODY_TYPES: Readonly<Record<string, string | undefined>> = {
  none: undefined,
  text: "text/plain",
  json: "application/json",
  html: "text/html",
  xml: "application/xml",
  javascript: "application/javascript",
  form: "application/x-www-form-urlencoded;param=value",
  binary: "application/octet-stream",
  formdata: undefined,
};

const METHODS = new Set(["GET", "POST", "PUT", "DELETE", "HEAD", "PATCH"]);

interface OAuthStep {
  readonly url: string;
  readonly body: string;
  readonly headers: Record<string, string>;
  /** Seconds; 0 = never refresh. */
  readonly expire: number;
}

export interface HttpConf {
  readonly url: string;
  readonly method: string;
  readonly intervalMs: number;
  readonly timeoutMs: number;
  readonly incremental: boolean;
  readonly body: string;
  readonly bodyType: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly responseType: "code" | "body";
  readonly compression: string;
  readonly states: Obj;
  readonly oauth: { access: OAuthStep; refresh: OAuthStep | undefined } | undefined;
  readonly tls: { rejectUnauthorized: boolean; ca?: string; cert?: string; key?: string };
}

function strMap(v: Record<string, unknown> | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, x] of Object.entries(v ?? {})) out[k] = typeof x === "string" ? x : JSON.stringify(x);
  return out;
}

function oauthStep(v: unknown): OAuthStep | undefined {
  if (!v || typeof v !== "object" || Array.isArray(v)) return undefined;
  const r = new PropReader(v as Props);
  const exp = r.raw("expire");
  const expire = typeof exp === "number" ? exp : typeof exp === "string" && exp.trim() !== "" ? Number(exp) : 0;
  return { url: r.str("url"), body: r.str("body"), headers: strMap(r.obj("headers")), expire: Number.isFinite(expire) ? expire : 0 };
}

/** Parses and validates httppull properties (throws EngineError with eKuiper's texts). */
export function parseHttpConf(props: Props, baseDir: string): HttpConf {
  const r = new PropReader(props);
  const url = (r.str("url", "http://localhost") || "http://localhost") + r.str("datasource");
  let scheme = "";
  try {
    scheme = new URL(url.replace(/\{\{[^}]*\}\}/g, "x")).protocol;
  } catch {
    throw new EngineError(`Invalid url, host not found`);
  }
  if (scheme !== "http:" && scheme !== "https:") throw new EngineError(`Invalid url ${url}, only http and https are supported`);
  const method = (r.str("method", "GET") || "GET").toUpperCase();
  if (!METHODS.has(method)) throw new EngineError(`Not supported HTTP method ${r.str("method")}.`);
  const timeoutMs = r.duration("timeout", 5000);
  if (timeoutMs < 0) throw new EngineError("timeout must be greater than or equal to 0");
  const intervalMs = r.duration("interval", 0);
  if (intervalMs < 0) throw new EngineError("interval must be greater than or equal to 0");
  const bodyType = (r.str("bodyType") || (method === "GET" || method === "HEAD" ? "none" : "json")).toLowerCase();
  if (!(bodyType in BODY_TYPES)) throw new EngineError(`Invalid body type value ${r.str("bodyType")}.`);
  const responseType = r.str("responseType", "code") || "code";
  if (responseType !== "code" && responseType !== "body") throw new EngineError(`Invalid response type value ${responseType}.`);
  const compression = r.str("compression").toLowerCase();
  if (compression && !DECOMPRESSIONS.has(compression)) throw new EngineError(`unsupported compression type ${compression}`);
  let oauth: HttpConf["oauth"];
  const o = r.obj("oauth");
  if (o && Object.keys(o).length > 0) {
    const or = new PropReader(o);
    const access = oauthStep(or.raw("access"));
    if (!access) throw new EngineError("if setting oAuth, `access` property is required");
    // Access without url: OAuth is ignored (eKuiper).
    if (access.url) oauth = { access, refresh: oauthStep(or.raw("refresh")) };
  }
  const states = r.obj("states");
  const file = (k: string) => {
    const p = r.str(k);
    return p ? readFileSync(isAbsolute(p) ? p : join(baseDir, p), "utf8") : undefined;
  };
  const tls: HttpConf["tls"] = { rejectUnauthorized: !r.bool("insecureSkipVerify") };
  const ca = file("rootCaPath");
  const cert = file("certificationPath");
  const key = file("privateKeyPath");
  if (ca) tls.ca = ca;
  if (cert) tls.cert = cert;
  if (key) tls.key = key;
  return {
    url,
    method,
    intervalMs,
    timeoutMs,
    incremental: r.bool("incremental"),
    body: r.str("body"),
    bodyType,
    headers: strMap(r.obj("headers")),
    responseType,
    compression,
    states: states ? toValues(states) : {},
    oauth,
    tls,
  };
}

function toValues(o: Record<string, unknown>): Obj {
  return decodeTupleJson(JSON.stringify(o)) as Obj;
}

/** A string property compiled once: a template when it holds an action, else constant. */
function compiled(text: string, name: string): (data: Obj) => string {
  if (!isTemplate(text)) return () => text;
  let t: CompiledTemplate;
  try {
    t = compileTemplate(text, {}, name);
  } catch (e) {
    throw new EngineError(errorText(e), undefined, { cause: e });
  }
  return (data) => t(data);
}

interface Request {
  url: (d: Obj) => string;
  body: (d: Obj) => string;
  headers: [string, (d: Obj) => string][];
}

function compileRequest(url: string, body: string, headers: Record<string, string>): Request {
  return {
    url: compiled(url, "url"),
    body: compiled(body, "body"),
    headers: Object.entries(headers).map(([k, v]) => [k, compiled(v, "header")]),
  };
}

const utf8 = new TextDecoder();

/**
 * One configured HTTP endpoint: `connect` checks the configured host and runs the OAuth access;
 * `fetchRows` renders the request over the given template data, sends it and decodes the answer.
 */
export class HttpClient {
  private readonly req: Request;
  private readonly access: Request | undefined;
  private readonly refresh: Request | undefined;
  /** Token response fields (OAuth), template data for headers and body. */
  tokens: Obj = {};
  private tokenAt = 0;
  private lastMd5 = "";
  private readonly aborts = new Set<AbortController>();

  constructor(
    readonly conf: HttpConf,
    private readonly guard: NetGuard,
  ) {
    this.req = compileRequest(conf.url, conf.body, conf.headers);
    const o = conf.oauth;
    this.access = o ? compileRequest(o.access.url, o.access.body, o.access.headers) : undefined;
    this.refresh = o?.refresh?.url ? compileRequest(o.refresh.url, o.refresh.body, o.refresh.headers) : undefined;
  }

  /**
   * The guard on the configured URL when its host is not a template (refused at open, before any
   * request; every request is checked again as it connects), then the OAuth access request.
   */
  async connect(): Promise<void> {
    const url = this.conf.url;
    if (!/^[a-z][a-z0-9+.-]*:\/\/[^/?#]*\{\{/i.test(url)) {
      const plain = url.replace(/\{\{[^}]*\}\}/g, "");
      if (URL.canParse(plain)) await checkUrl(plain, this.guard);
    }
    if (this.access) await this.authorize(this.access);
  }

  private async authorize(step: Request): Promise<void> {
    const res = await this.send(step, "POST", "json", this.tokens);
    if (res.status < 200 || res.status >= 300) throw new EngineError(`fail to get access token: response code error: ${res.status}`);
    const v = this.decode(res.body);
    const row = Array.isArray(v) ? v[0] : v;
    this.tokens = { ...this.tokens, ...(row ?? {}) };
    this.tokenAt = Date.now();
  }

  /** Refreshes tokens when half of `expire` has elapsed (refresh request, else a new access). */
  private async renew(): Promise<void> {
    const o = this.conf.oauth;
    if (!o || o.access.expire <= 0 || Date.now() - this.tokenAt < (o.access.expire * 1000) / 2) return;
    await this.authorize(this.refresh ?? this.access!);
  }

  /**
   * Sends the configured request over `data` (+ tokens) and returns the decoded rows; null when
   * `incremental` and the body is unchanged. Throws EngineError with eKuiper's response texts.
   */
  async fetchRows(data: Obj): Promise<Obj[] | null> {
    await this.renew();
    const all: Obj = { ...this.tokens, ...data };
    const c = this.conf;
    const res = await this.send(this.req, c.method, c.bodyType, all);
    if (res.status < 200 || res.status >= 300) throw new EngineError(`response code error: ${res.status}`);
    let body = res.body;
    if (c.incremental) {
      const md5 = new Bun.CryptoHasher("md5").update(body).digest("hex");
      if (md5 === this.lastMd5) return null;
      this.lastMd5 = md5;
    }
    if (c.compression) {
      body = decompressBytes(body, c.compression);
    }
    const rows = this.decode(body);
    if (c.responseType === "body") {
      for (const r of rows) {
        const code = r.code;
        if (code === undefined) throw new EngineError("response body error: code not found");
        const n = typeof code === "bigint" ? Number(code) : typeof code === "number" ? code : NaN;
        if (!(n >= 200 && n < 300)) throw new EngineError(`response code error: ${String(code)}`);
      }
    }
    return rows;
  }

  private decode(body: Uint8Array): Obj[] {
    let v: Value;
    try {
      v = decodeTupleJson(utf8.decode(body));
    } catch (e) {
      throw new EngineError(`response body error: decode fail for ${errorText(e)}`, undefined, { cause: e });
    }
    if (isObj(v)) return [v];
    if (Array.isArray(v) && v.every((x) => isObj(x))) return v as Obj[];
    throw new EngineError(`response body error: decode fail for only map[string]interface{} and []map[string]interface{} is supported`);
  }

  private async send(r: Request, method: string, bodyType: string, data: Obj): Promise<{ status: number; body: Uint8Array }> {
    const c = this.conf;
    const url = r.url(data);
    const headers: Record<string, string> = {};
    for (const [k, f] of r.headers) headers[k] = f(data);
    let body: string | undefined;
    if (bodyType !== "none") {
      body = r.body(data);
      const ct = BODY_TYPES[bodyType];
      if (ct && !Object.keys(headers).some((h) => h.toLowerCase() === "content-type")) headers["Content-Type"] = ct;
    }
    if (c.compression && !Object.keys(headers).some((h) => h.toLowerCase() === "accept-encoding")) headers["Accept-Encoding"] = c.compression;
    const ac = new AbortController();
    this.aborts.add(ac);
    const timer = c.timeoutMs > 0 ? setTimeout(() => ac.abort(new DOMException("timeout", "TimeoutError")), c.timeoutMs) : undefined;
    try {
      // With `compression` the body is decompressed here, by the configured algorithm (eKuiper).
      const res = await guardedFetch(url, { method, headers, body, signal: ac.signal, tls: c.tls, decompress: !c.compression }, this.guard);
      return { status: res.status, body: new Uint8Array(await res.arrayBuffer()) };
    } catch (e) {
      if (e instanceof EngineError) throw e;
      throw new EngineError(`${method} ${url}: ${errorText(e)}`, undefined, { cause: e });
    } finally {
      clearTimeout(timer);
      this.aborts.delete(ac);
    }
  }

  close(): void {
    for (const a of this.aborts) a.abort();
  }
}
