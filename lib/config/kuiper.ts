/**
 * `etc/kuiper.yaml` (config-and-cli.md §2): YAML → keys lower-cased → `KUIPER__…` environment
 * overrides → typed settings with eKuiper's defaults. floe's one deliberate difference: the REST
 * and CLI listeners bind 127.0.0.1 unless an address is configured (secure default).
 */
import { YAML } from "bun";
import { hostname } from "node:os";
import { isAbsolute, join } from "node:path";
import { COMPILE_LIMIT_KEYS, DEFAULT_COMPILE_LIMITS, type CompileLimits } from "../value/compile-budget.ts";
import { EngineError, ErrCode, errorText } from "../errors.ts";
import { goDurationMs } from "../value/duration.ts";
import { localZone, loadLocation, type Zone } from "../value/time.ts";
import { applyEnv, isDoc, lowerKeys, pick, type Doc } from "./env.ts";

export interface KuiperConfig {
  readonly basic: BasicSettings;
  /** Default rule options (the `rule:` section, rules-and-sinks.md §1.1), keys as in rule JSON. */
  readonly rule: Readonly<Record<string, unknown>>;
  /** Default sink cache settings (the `sink:` section). */
  readonly sink: Readonly<Record<string, unknown>>;
  readonly source: { readonly httpServerIp: string; readonly httpServerPort: number };
  readonly store: { readonly sqliteName: string };
  /** `cluster:` (docs/group.md): empty `nats` = a single node, exactly as without the section. */
  readonly cluster: ClusterSettings;
  /** Rule tracing (config-and-cli.md §2.7). */
  readonly openTelemetry: OpenTelemetrySettings;
  /** The raw lower-cased document (after env), for whatever a connector needs. */
  readonly doc: Doc;
}

/** The `openTelemetry` section (config-and-cli.md §2.7), eKuiper's defaults. */
export interface OpenTelemetrySettings {
  readonly serviceName: string;
  readonly enableRemoteCollector: boolean;
  /** OTLP/HTTP collector, `host:port` (plain HTTP) or a URL. */
  readonly remoteEndpoint: string;
  /** Traces the local store keeps (the oldest go first). */
  readonly localTraceCapacity: number;
  /** floe: bytes of spans the local store holds in memory (`localTraceMaxBytes`, default 64 MiB; the oldest traces go first). */
  readonly localTraceMaxBytes: number;
  readonly enableLocalStorage: boolean;
}

export interface BasicSettings {
  readonly logLevel: string;
  readonly debug: boolean;
  readonly consoleLog: boolean;
  readonly fileLog: boolean;
  /** Log rotation (log-file.ts): hours per file, bytes per file, files kept, hours kept. */
  readonly rotateTime: number;
  readonly rotateSize: number;
  readonly rotateCount: number;
  readonly maxAge: number;
  readonly ip: string;
  readonly port: number;
  readonly restIp: string;
  readonly restPort: number;
  readonly restTls: { certfile: string; keyfile: string } | undefined;
  readonly timezoneName: string;
  readonly timezone: Zone;
  readonly authentication: boolean;
  readonly prometheus: boolean;
  readonly prometheusPort: number;
  readonly ignoreCase: boolean;
  readonly rulePatrolIntervalMs: number;
  readonly gracefulShutdownTimeoutMs: number;
  readonly resourceProfile: boolean;
  readonly metricsDump: boolean;
  readonly enableRestAuditLog: boolean;
  readonly enablePrivateNet: boolean;
  readonly allowExternalFileAccess: boolean;
  /** floe: largest accepted request body in bytes (`basic.maxBodySize`, default 10 MiB). */
  readonly maxBodySize: number;
  /** floe: bytes of events one SSE client (an `sse` sink's, a trial run's) may have waiting (`basic.sseClientMaxBytes`, default 8 MiB). */
  readonly sseClientMaxBytes: number;
  readonly pluginHosts: string;
  /**
   * floe: limits of each JavaScript UDF's sandbox: `basic.udfTimeout` (Go duration, default
   * 100ms) per call and per script load, `basic.udfMemoryLimit` (bytes, default 32 MiB) per UDF.
   */
  readonly udfLimits: { readonly timeoutMs: number; readonly memoryBytes: number };
  /** floe: the compile budget of uploaded definitions (`basic.compileLimits.<name>`, compile-budget.ts). */
  readonly compileLimits: CompileLimits;
  /** floe: the web console at `/ui` on the REST port (`basic.console`, default true). */
  readonly console: boolean;
  /**
   * floe: the request-origin policy (net/origin-policy.ts). `basic.allowedOrigins`: origins whose
   * pages may call the API and the websocket endpoints (`*`: any, eKuiper's behaviour);
   * `basic.allowedHosts`: host names accepted in `Host` besides loopback, IP addresses and the
   * listen addresses (`*`: any). A YAML list or a comma-separated string; default none.
   */
  readonly allowedOrigins: readonly string[];
  readonly allowedHosts: readonly string[];
}

/**
 * floe's `cluster:` section: instances with the same `group` on the same NATS servers form one
 * engine. `partitions` is the group's default partition count (a stream may declare its own),
 * `heartbeatInterval`/`leaseTimeout` (Go durations) bound how fast a dead instance's partitions
 * move: within leaseTimeout + heartbeatInterval (default 6 s + 1 s).
 */
export interface ClusterSettings {
  /** NATS server URLs (`cluster.nats`, comma-separated); none = single node. */
  readonly nats: readonly string[];
  readonly group: string;
  /** This instance's id in the group (default `<hostname>-<pid>`). */
  readonly instance: string;
  readonly partitions: number;
  readonly heartbeatMs: number;
  readonly leaseMs: number;
  /** Who may write the group's definitions, and how this member reaches NATS (cluster/auth.ts). */
  readonly auth: ClusterAuth;
}

/**
 * The group's trust settings: `secret` (or `secretFile`, read at connect) signs every definition
 * entry; `nats` holds the section's NATS connection properties (token, username/password,
 * credsFile, nkeySeed/nkeySeedFile, TLS) with the names of the `nats` connector.
 */
export interface ClusterAuth {
  readonly secret: string;
  /** Absolute path ("" = none); relative paths resolve against the etc directory. */
  readonly secretFile: string;
  readonly nats: Readonly<Record<string, unknown>>;
  /** Where relative file paths of `nats` resolve (the etc directory, else the working directory). */
  readonly base: string;
}

/** Loads the file (absent file or dir → defaults) and applies `env`. */
export async function loadKuiperConfig(etcDir: string | undefined, env: Record<string, string | undefined> = process.env): Promise<KuiperConfig> {
  let doc: Doc = {};
  if (etcDir) {
    const file = Bun.file(join(etcDir, "kuiper.yaml"));
    if (await file.exists()) {
      let parsed: unknown;
      try {
        parsed = YAML.parse(await file.text());
      } catch (e) {
        throw new EngineError(`fail to load kuiper.yaml: ${errorText(e)}`, ErrCode.general, { cause: e });
      }
      if (isDoc(parsed)) doc = lowerKeys(parsed) as Doc;
    }
  }
  applyEnv(doc, "KUIPER", env);
  return fromDoc(doc, etcDir);
}

/** Builds the typed settings from a lower-cased document. */
export function fromDoc(doc: Doc, etcDir?: string): KuiperConfig {
  const b = (k: string) => pick(doc, "basic", k);
  const tzName = str(b("timezone"), "Local");
  let timezone: Zone;
  try {
    timezone = tzName === "Local" || tzName === "" ? localZone() : loadLocation(tzName);
  } catch (e) {
    throw new EngineError(`invalid basic.timezone ${JSON.stringify(tzName)}: ${errorText(e)}`, ErrCode.confKey);
  }
  const tls = pick(doc, "basic", "resttls");
  const certfile = str(pick(tls, "certfile"), "");
  const keyfile = str(pick(tls, "keyfile"), "");
  const prometheus = bool(b("prometheus"), false);
  // eKuiper's shipped kuiper.yaml sets 20499, so KUIPER__BASIC__PROMETHEUS=true alone (as documented)
  // serves on 20499; only an explicit 0 is eKuiper's fatal "Miss configuration prometheusPort".
  const rawPromPort = b("prometheusport");
  const prometheusPort = rawPromPort === undefined || rawPromPort === null ? 20499 : int(rawPromPort, 0);
  if (prometheus && prometheusPort === 0) throw new EngineError("Miss configuration prometheusPort", ErrCode.general);
  let patrol = durationMs(b("rulepatrolinterval"), 10_000);
  if (patrol < 1000) patrol = 10_000;
  let grace = durationMs(b("gracefulshutdowntimeout"), 3_000);
  if (grace < 1) grace = 3_000;
  const rule: Record<string, unknown> = {};
  const r = pick(doc, "rule");
  const ruleKeys = ["isEventTime", "lateTolerance", "concurrency", "bufferLength", "sendMetaToSink", "sendError", "qos", "checkpointInterval", "windowMaxRows", "windowMaxBytes"];
  for (const k of ruleKeys) {
    const v = pick(r, k);
    if (v !== undefined && v !== null) rule[k] = v;
  }
  const attempts = pick(r, "restartStrategy", "attempts");
  if (typeof attempts === "number") rule.restartStrategy = { attempts };
  const sink: Record<string, unknown> = {};
  const s = pick(doc, "sink");
  for (const k of ["enableCache", "memoryCacheThreshold", "maxDiskCache", "bufferPageSize", "resendInterval", "cleanCacheAtStop", "resendAlterQueue", "resendPriority", "resendIndicatorField", "resendDestination"]) {
    const v = pick(s, k);
    if (v !== undefined && v !== null) sink[k] = v;
  }
  let httpPort = int(pick(doc, "source", "httpserverport"), 10081);
  // floe: 0 asks for a free port (tests); eKuiper corrects it to 10081.
  if (httpPort < 0 || httpPort > 65535) httpPort = 10081;
  return {
    basic: {
      logLevel: str(b("loglevel"), "info"),
      debug: bool(b("debug"), false),
      consoleLog: bool(b("consolelog"), false),
      fileLog: bool(b("filelog"), false),
      rotateTime: int(b("rotatetime"), 24),
      rotateSize: int(b("rotatesize"), 10485760),
      rotateCount: int(b("rotatecount"), 3),
      maxAge: int(b("maxage"), 72),
      ip: str(b("ip"), "127.0.0.1"),
      port: int(b("port"), 20498),
      restIp: str(b("restip"), "127.0.0.1"),
      restPort: int(b("restport"), 9081),
      restTls: certfile && keyfile ? { certfile, keyfile } : undefined,
      timezoneName: tzName,
      timezone,
      authentication: bool(b("authentication"), false),
      prometheus,
      prometheusPort,
      ignoreCase: bool(b("ignorecase"), false),
      rulePatrolIntervalMs: patrol,
      gracefulShutdownTimeoutMs: grace,
      resourceProfile: bool(pick(doc, "basic", "resourceprofileconfig", "enable"), false),
      metricsDump: bool(pick(doc, "basic", "metricsdumpconfig", "enable"), false),
      enableRestAuditLog: bool(b("enablerestauditlog"), false),
      enablePrivateNet: bool(b("enableprivatenet"), false),
      allowExternalFileAccess: bool(b("allowexternalfileaccess"), false),
      maxBodySize: int(b("maxbodysize"), 10 * 1024 * 1024),
      sseClientMaxBytes: positive(int(b("sseclientmaxbytes"), 8 * 1024 * 1024), 8 * 1024 * 1024),
      pluginHosts: str(b("pluginhosts"), "https://packages.emqx.io"),
      udfLimits: {
        timeoutMs: positive(durationMs(b("udftimeout"), 100), 100),
        memoryBytes: positive(int(b("udfmemorylimit"), 32 * 1024 * 1024), 32 * 1024 * 1024),
      },
      compileLimits: compileLimits(b("compilelimits")),
      console: bool(b("console"), true),
      allowedOrigins: list(b("allowedorigins")),
      allowedHosts: list(b("allowedhosts")),
    },
    rule,
    sink,
    source: { httpServerIp: str(pick(doc, "source", "httpserverip"), "127.0.0.1"), httpServerPort: httpPort },
    store: { sqliteName: str(pick(doc, "store", "sqlite", "name"), "") || "sqliteKV.db" },
    cluster: clusterSettings(doc, etcDir ?? process.cwd()),
    openTelemetry: {
      serviceName: str(pick(doc, "openTelemetry", "serviceName"), "") || "kuiperd-service",
      enableRemoteCollector: bool(pick(doc, "openTelemetry", "enableRemoteCollector"), false),
      remoteEndpoint: str(pick(doc, "openTelemetry", "remoteEndpoint"), "") || "localhost:4318",
      localTraceCapacity: positive(int(pick(doc, "openTelemetry", "localTraceCapacity"), 2048), 2048),
      localTraceMaxBytes: positive(int(pick(doc, "openTelemetry", "localTraceMaxBytes"), 64 * 1024 * 1024), 64 * 1024 * 1024),
      enableLocalStorage: bool(pick(doc, "openTelemetry", "enableLocalStorage"), false),
    },
    doc,
  };
}

function clusterSettings(doc: Doc, base: string): ClusterSettings {
  const c = (k: string) => pick(doc, "cluster", k);
  const nats = list(c("nats"));
  const group = str(c("group"), "") || "default";
  // A group names a JetStream KV bucket (floe_<group>) and NATS subjects: one token of letters, digits, - and _.
  if (!/^[A-Za-z0-9_-]+$/.test(group)) throw new EngineError(`invalid cluster.group ${JSON.stringify(group)}: use letters, digits, - and _`, ErrCode.confKey);
  const instance = str(c("instance"), "") || `${hostname().replace(/[^A-Za-z0-9_-]/g, "_")}-${process.pid}`;
  if (!/^[A-Za-z0-9_-]+$/.test(instance)) throw new EngineError(`invalid cluster.instance ${JSON.stringify(instance)}: use letters, digits, - and _`, ErrCode.confKey);
  const heartbeatMs = positive(durationMs(c("heartbeatinterval"), 1000), 1000);
  const leaseMs = Math.max(positive(durationMs(c("leasetimeout"), 6000), 6000), 2 * heartbeatMs);
  const section = pick(doc, "cluster");
  const natsProps: Record<string, unknown> = {};
  if (isDoc(section)) for (const [k, v] of Object.entries(section)) if (!CLUSTER_OWN_KEYS.has(k)) natsProps[k] = v;
  const secretFile = str(c("secretfile"), "");
  const auth: ClusterAuth = { secret: str(c("secret"), ""), secretFile: secretFile && !isAbsolute(secretFile) ? join(base, secretFile) : secretFile, nats: natsProps, base };
  return { nats, group, instance, partitions: positive(int(c("partitions"), 12), 12), heartbeatMs, leaseMs, auth };
}

/** `cluster:` keys that are not NATS connection properties. */
const CLUSTER_OWN_KEYS = new Set(["nats", "group", "instance", "partitions", "heartbeatinterval", "leasetimeout", "secret", "secretfile"]);

function str(v: unknown, dflt: string): string {
  if (typeof v === "string") return v;
  if (typeof v === "number" || typeof v === "boolean") return String(v);
  return dflt;
}

function bool(v: unknown, dflt: boolean): boolean {
  if (typeof v === "boolean") return v;
  if (typeof v === "string") return v === "true" || v === "TRUE" || v === "True" || v === "1" || v === "t";
  if (typeof v === "number") return v !== 0;
  return dflt;
}

/** A YAML list, or a comma-separated string (`KUIPER__BASIC__ALLOWEDORIGINS=https://a,https://b`). */
function list(v: unknown): string[] {
  const items = Array.isArray(v) ? v.map((x) => str(x, "")) : str(v, "").split(",");
  return items.map((x) => x.trim()).filter((x) => x !== "");
}

/** `basic.compileLimits`: each setting a positive integer, the default where absent or unreadable. */
function compileLimits(v: unknown): CompileLimits {
  const out: Record<string, number> = {};
  for (const k of COMPILE_LIMIT_KEYS) out[k] = positive(int(pick(v, k), DEFAULT_COMPILE_LIMITS[k]), DEFAULT_COMPILE_LIMITS[k]);
  return out as unknown as CompileLimits;
}

function positive(v: number, dflt: number): number {
  return v > 0 ? v : dflt;
}

function int(v: unknown, dflt: number): number {
  if (typeof v === "number" && Number.isFinite(v)) return Math.trunc(v);
  if (typeof v === "string" && /^\s*[+-]?\d+\s*$/.test(v)) return Number(v);
  return dflt;
}

/** A Go duration string, or a bare number of milliseconds (floe treats env numbers as ms too); `dflt` when unreadable. */
function durationMs(v: unknown, dflt: number): number {
  if (typeof v === "number" && Number.isFinite(v)) return v;
  if (typeof v === "string" && v.trim() !== "") {
    try {
      return goDurationMs(v.trim());
    } catch {
      return dflt;
    }
  }
  return dflt;
}
