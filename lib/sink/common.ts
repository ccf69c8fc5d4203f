/**
 * The properties every sink accepts (rules-and-sinks.md §3) and the cache options (§3.4), decoded
 * and validated with eKuiper's messages. Cache options are validated even when the cache is off.
 */
import { EngineError, ErrCode } from "../errors.ts";
import { PropReader, type Props } from "../config/props.ts";

export interface CacheConf {
  readonly enableCache: boolean;
  readonly memoryCacheThreshold: number;
  readonly maxDiskCache: number;
  readonly bufferPageSize: number;
  /** ms */
  readonly resendInterval: number;
  readonly cleanCacheAtStop: boolean;
  readonly resendAlterQueue: boolean;
  readonly resendPriority: number;
  readonly resendIndicatorField: string;
  readonly resendDestination: string;
}

/** The shipped kuiper.yaml `sink:` section (config-and-cli.md §2.3). */
export const SHIPPED_CACHE_DEFAULTS: CacheConf = {
  enableCache: false,
  memoryCacheThreshold: 1024,
  maxDiskCache: 1024000,
  bufferPageSize: 256,
  resendInterval: 0,
  cleanCacheAtStop: false,
  resendAlterQueue: false,
  resendPriority: 0,
  resendIndicatorField: "",
  resendDestination: "",
};

/** Default capacity of a sink's queue when the sink sets no `bufferLength` (floe). */
export const DEFAULT_SINK_QUEUE = 10_000;

export interface SinkCommon {
  readonly sendSingle: boolean;
  readonly omitIfEmpty: boolean;
  readonly dataTemplate: string;
  readonly format: string;
  readonly schemaId: string;
  readonly delimiter: string;
  readonly hasHeader: boolean;
  readonly fields: string[] | undefined;
  readonly excludeFields: string[] | undefined;
  readonly dataField: string;
  readonly batchSize: number;
  /** ms */
  readonly lingerInterval: number;
  /** Queue capacity (explicit `bufferLength`, else floe's default). */
  readonly bufferLength: number;
  readonly compression: string;
  readonly encryption: string;
  readonly encProps: Record<string, unknown> | undefined;
  readonly cache: CacheConf;
}

function sinkConfError(msg: string): EngineError {
  return new EngineError(`fail to parse sink configuration: ${msg}`, ErrCode.general);
}

function cacheConf(r: PropReader, d: CacheConf): CacheConf {
  const c: CacheConf = {
    enableCache: r.bool("enableCache", d.enableCache),
    memoryCacheThreshold: r.int("memoryCacheThreshold", d.memoryCacheThreshold),
    maxDiskCache: r.int("maxDiskCache", d.maxDiskCache),
    bufferPageSize: r.int("bufferPageSize", d.bufferPageSize),
    resendInterval: r.duration("resendInterval", d.resendInterval),
    cleanCacheAtStop: r.bool("cleanCacheAtStop", d.cleanCacheAtStop),
    resendAlterQueue: r.bool("resendAlterQueue", d.resendAlterQueue),
    resendPriority: r.int("resendPriority", d.resendPriority),
    resendIndicatorField: r.str("resendIndicatorField", d.resendIndicatorField),
    resendDestination: r.str("resendDestination", d.resendDestination),
  };
  const errs: string[] = [];
  if (c.memoryCacheThreshold < 0) errs.push("memoryCacheThreshold:memoryCacheThreshold must be positive");
  if (c.maxDiskCache < 0) errs.push("maxDiskCache:maxDiskCache must be positive");
  if (c.bufferPageSize <= 0) errs.push("bufferPageSize:bufferPageSize must be positive");
  if (c.resendInterval < 0) errs.push("resendInterval:resendInterval must be positive");
  if (c.bufferPageSize > c.memoryCacheThreshold)
    errs.push("memoryCacheThresholdTooSmall:memoryCacheThreshold must be greater than or equal to bufferPageSize");
  if (c.bufferPageSize > 0 && c.memoryCacheThreshold % c.bufferPageSize !== 0)
    errs.push("memoryCacheThresholdNotMultiple:memoryCacheThreshold must be a multiple of bufferPageSize");
  if (c.bufferPageSize > c.maxDiskCache) errs.push("maxDiskCacheTooSmall:maxDiskCache must be greater than bufferPageSize");
  if (c.bufferPageSize > 0 && c.maxDiskCache % c.bufferPageSize !== 0)
    errs.push("maxDiskCacheNotMultiple:maxDiskCache must be a multiple of bufferPageSize");
  if (c.resendPriority < -1 || c.resendPriority > 1) errs.push("resendPriority:resendPriority must be -1, 0 or 1");
  if (errs.length) throw sinkConfError(`invalid cache properties: ${errs.join("\n")}`);
  return c;
}

/** Decodes and validates the common properties of one action. */
export function parseSinkCommon(props: Props, defaults: CacheConf = SHIPPED_CACHE_DEFAULTS): SinkCommon {
  const r = new PropReader(props);
  let common: SinkCommon;
  try {
    const fields = r.strList("fields");
    const excludeFields = r.strList("excludeFields");
    if (fields && excludeFields) throw new EngineError("field and excludeFields cannot both be set");
    const batchSize = r.int("batchSize", 0);
    if (batchSize < 0) throw new EngineError(`invalid batchSize ${batchSize}`);
    const lingerInterval = r.duration("lingerInterval", 0);
    if (lingerInterval < 0) throw new EngineError(`invalid lingerInterval ${lingerInterval}ms, must be positive`);
    const compression = r.str("compression", "").toLowerCase();
    if (compression && !["gzip", "zstd", "zlib", "flate"].includes(compression)) throw new EngineError(`unsupported compressor: ${compression}`);
    const bufferLength = r.int("bufferLength", 0);
    common = {
      sendSingle: r.bool("sendSingle"),
      omitIfEmpty: r.bool("omitIfEmpty"),
      dataTemplate: r.str("dataTemplate"),
      format: r.str("format", "json").toLowerCase() || "json",
      schemaId: r.str("schemaId"),
      delimiter: r.str("delimiter", ",") || ",",
      hasHeader: r.bool("hasHeader"),
      fields,
      excludeFields,
      dataField: r.str("dataField") || r.str("tableDataField"),
      batchSize,
      lingerInterval,
      bufferLength: bufferLength > 0 ? bufferLength : DEFAULT_SINK_QUEUE,
      compression,
      encryption: r.str("encryption", "").toLowerCase(),
      encProps: r.obj("encProps"),
      cache: SHIPPED_CACHE_DEFAULTS,
    };
  } catch (e) {
    if (e instanceof EngineError) throw sinkConfError(e.message);
    throw e;
  }
  const cache = cacheConf(r, defaults);
  return { ...common, cache: sameCache(cache, defaults) ? defaults : cache };
}

/** Whether two cache configurations say the same (an action that sets none shares the defaults' object). */
function sameCache(a: CacheConf, b: CacheConf): boolean {
  for (const k in a) if (a[k as keyof CacheConf] !== b[k as keyof CacheConf]) return false;
  return true;
}
