/** System routes (rest-api.md §3, §17): info, stop, ping, runtime configs, batch requests. */
import { readFileSync } from "node:fs";
import { totalmem } from "node:os";
import { ErrCode } from "../errors.ts";
import { loadLocation } from "../value/time.ts";
import { loopLag } from "../runtime/loop-lag.ts";
import { field, isObject, readJson } from "./body.ts";
import type { Engine } from "./engine.ts";
import { empty, errorBody, jsonSniffed, sentence } from "./respond.ts";
import type { RouteDef } from "./router.ts";

const OS: Record<string, string> = { linux: "linux", darwin: "darwin", win32: "windows" };
const ARCH: Record<string, string> = { x64: "amd64", arm64: "arm64", arm: "arm" };

function memoryTotal(): number {
  try {
    const v = readFileSync("/sys/fs/cgroup/memory.max", "utf8").trim();
    if (/^\d+$/.test(v)) return Math.min(Number(v), totalmem());
  } catch {
    // no cgroup v2 limit
  }
  return totalmem();
}

function info(e: Engine): Response {
  return jsonSniffed({
    version: e.version,
    os: OS[process.platform] ?? process.platform,
    arch: ARCH[process.arch] ?? process.arch,
    upTimeSeconds: Math.floor((Date.now() - e.startedAt) / 1000),
    cpuUsage: e.cpu.percent(),
    memoryUsed: String(process.memoryUsage.rss()),
    memoryTotal: String(memoryTotal()),
    // floe: present only in safe mode (safe-mode.ts), so the usual body stays eKuiper's.
    ...(e.safeMode.on ? { safeMode: true, safeModeReason: e.safeMode.reason } : {}),
    // floe's own (after eKuiper's keys): event-loop lag over the last minute (loop-lag.ts).
    eventLoopLag: loopLag.stats(),
  });
}

function stop(e: Engine): Response {
  setTimeout(() => e.requestStop?.(0), 1000);
  return sentence("stop success");
}

export const systemRoutes: RouteDef<Engine>[] = [
  { method: "GET", path: "/", handler: (_c, e) => info(e), open: true },
  { method: "POST", path: "/", handler: (_c, e) => info(e), open: true },
  { method: "GET", path: "/stop", handler: (_c, e) => stop(e) },
  { method: "POST", path: "/stop", handler: (_c, e) => stop(e) },
  { method: "GET", path: "/ping", handler: () => empty(), open: true },
];

export const configRoutes: RouteDef<Engine>[] = [
  {
    method: "PATCH",
    path: "/configs",
    handler: async (ctx, e) => {
      const b = await readJson(ctx);
      // The handler writes the status before the body: no nosniff header [quirk].
      if (!b.ok) return errorBody(ErrCode.undefined, `Invalid JSON: ${b.error}`, 400, false);
      if (!isObject(b.value)) return errorBody(ErrCode.undefined, `Invalid JSON: json: cannot unmarshal ${Array.isArray(b.value) ? "array" : typeof b.value} into Go value of type server.configPatchRequest`, 400, false);
      const tz = field(b.value, "timezone");
      if (typeof tz === "string") {
        try {
          e.zoneOverride = tz === "Local" || tz === "" ? undefined : loadLocation(tz);
        } catch {
          return errorBody(ErrCode.undefined, `Invalid TZ: unknown time zone ${tz}`, 400, false);
        }
      }
      const md = field(b.value, "metricsDumpConfig");
      if (isObject(md) && typeof field(md, "enable") === "boolean") e.metricsDump = field(md, "enable") as boolean;
      return empty(204);
    },
  },
];

export const batchRoutes: RouteDef<Engine>[] = [
  {
    method: "POST",
    path: "/batch/req",
    handler: async (ctx, e) => {
      const b = await readJson(ctx);
      if (!b.ok) return errorBody(ErrCode.undefined, b.error);
      if (!Array.isArray(b.value)) return errorBody(ErrCode.undefined, `json: cannot unmarshal ${isObject(b.value) ? "object" : typeof b.value} into Go value of type []*server.EachRequest`);
      const out: { code: number; response?: string; error?: string }[] = [];
      for (const item of b.value) {
        const r = isObject(item) ? item : {};
        const method = String(field(r, "method") ?? "");
        const path = String(field(r, "path") ?? "");
        const body = field(r, "body");
        if (!/^[A-Z]+$/.test(method) || !path.startsWith("/")) {
          out.push({ code: 0, error: `net/http: invalid method ${JSON.stringify(method)}` });
          continue;
        }
        const headers = new Headers(ctx.headers as unknown as Record<string, string>);
        headers.delete("content-length");
        const req = new Request(new URL(path, "http://localhost").href, { method, headers, body: method === "GET" || method === "HEAD" ? undefined : typeof body === "string" ? body : "" });
        const res = await ctx.dispatch(req);
        const text = await res.text();
        out.push(text ? { code: res.status, response: text } : { code: res.status });
      }
      return jsonSniffed(out);
    },
  },
];
