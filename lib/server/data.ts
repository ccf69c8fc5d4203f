/** Configuration export/import (rest-api.md §10): v1 JSON, async tasks, v2 YAML. */
import { ErrCode, errorText } from "../errors.ts";
import type { Engine } from "./engine.ts";
import { download, errorBody, fromError, goJson, jsonSniffed, sentence } from "./respond.ts";
import type { RouteDef } from "./router.ts";
import { contentOrFile } from "./ruleset.ts";
import { emptyConfig, exportConfig, exportYaml, importConfig, importYaml, statusFailed, type ImportStatus } from "./transfer.ts";
import { parseBool } from "./body.ts";

interface Task {
  id: string;
  status: "register" | "running" | "finish" | "error" | "cancel";
  message: string;
  createdTimestamp: number;
  updatedTimestamp: number;
}


function saveStatus(e: Engine, s: ImportStatus): void {
  e.kv.set("importStatus", "last", JSON.stringify(s));
}

/** Runs an import; a `stop=1` full import exits the process with status 100 afterwards. */
async function runImport(e: Engine, text: string, partial: boolean, stop: boolean, signal?: AbortSignal): Promise<ImportStatus> {
  const status = await importConfig(e, text, partial, signal, stop);
  saveStatus(e, status);
  if (stop && !partial && !statusFailed(status)) setTimeout(() => e.requestStop?.(100), 1000);
  return status;
}

function importResponse(status: ImportStatus): Response {
  if (statusFailed(status)) return errorBody(ErrCode.undefined, goJson(status));
  return jsonSniffed({ ErrorMsg: "", ConfigResponse: status });
}

export const dataRoutes: RouteDef<Engine>[] = [
  { method: "GET", path: "/data/export", handler: (_c, e) => download(goJson(exportConfig(e))) },
  {
    method: "POST",
    path: "/data/export",
    handler: async (ctx, e) => {
      let ids: string[] = [];
      try {
        const v = JSON.parse(await ctx.text());
        if (Array.isArray(v)) ids = v.map(String);
      } catch {
        // invalid body = empty list
      }
      return download(goJson(exportConfig(e, ids)));
    },
  },
  {
    method: "POST",
    path: "/data/import",
    handler: async (ctx, e) => {
      const text = await contentOrFile(ctx, e, "");
      if (text instanceof Response) return text;
      try {
        return importResponse(await runImport(e, text, parseBool(ctx.query.get("partial")), parseBool(ctx.query.get("stop"))));
      } catch (err) {
        return fromError(err);
      }
    },
  },
  {
    method: "GET",
    path: "/data/import/status",
    handler: (_c, e) => {
      const last = e.kv.get("importStatus", "last");
      const s = last ? (JSON.parse(last) as ImportStatus) : emptyConfig();
      const cur = exportConfig(e);
      return jsonSniffed({
        ...emptyConfig(),
        streams: s.streams,
        tables: s.tables,
        rules: s.rules,
        nativePlugins: cur.nativePlugins,
        portablePlugins: cur.portablePlugins,
        sourceConfig: s.sourceConfig,
        sinkConfig: s.sinkConfig,
        connectionConfig: s.connectionConfig,
        Service: cur.Service,
        Schema: cur.Schema,
        uploads: cur.uploads,
        scripts: cur.scripts,
      });
    },
  },
];

export const dataV2Routes: RouteDef<Engine>[] = [
  { method: "GET", path: "/v2/data/export", handler: (_c, e) => download(exportYaml(e)) },
  {
    method: "POST",
    path: "/v2/data/import",
    handler: async (ctx, e) => {
      const text = await contentOrFile(ctx, e, ": bad request");
      if (text instanceof Response) return text;
      try {
        await importYaml(e, text);
        return sentence("success");
      } catch (err) {
        return fromError(err);
      }
    },
  },
];

function getTask(e: Engine, id: string): Task | undefined {
  const t = e.kv.get("asyncTask", id);
  return t ? (JSON.parse(t) as Task) : undefined;
}

function putTask(e: Engine, t: Task): void {
  e.kv.set("asyncTask", t.id, JSON.stringify(t));
}

export const asyncRoutes: RouteDef<Engine>[] = [
  {
    method: "POST",
    path: "/async/data/import",
    handler: async (ctx, e) => {
      const text = await contentOrFile(ctx, e, "");
      if (text instanceof Response) return text;
      const sec = Math.floor(Date.now() / 1000);
      const id = `dataImport-${sec}`;
      // Two requests in the same second collide, with eKuiper's (odd) message.
      if (getTask(e, id)) return errorBody(ErrCode.undefined, `async task: ${id} not found`);
      const task: Task = { id, status: "running", message: "", createdTimestamp: sec, updatedTimestamp: sec };
      putTask(e, task);
      const ac = new AbortController();
      e.dataTasks.set(id, ac);
      const partial = parseBool(ctx.query.get("partial"));
      const stop = parseBool(ctx.query.get("stop"));
      void (async () => {
        let t: Task;
        try {
          const status = await runImport(e, text, partial, stop, ac.signal);
          const cur = getTask(e, id);
          if (cur?.status === "cancel") return;
          const body = goJson({ ErrorMsg: "", ConfigResponse: status });
          t = statusFailed(status) ? { ...task, status: "error", message: `err:import failed, response:${body}` } : { ...task, status: "finish", message: body };
        } catch (err) {
          t = { ...task, status: "error", message: `err:${errorText(err)}, response:null` };
        }
        e.dataTasks.delete(id);
        putTask(e, { ...t, updatedTimestamp: Math.floor(Date.now() / 1000) });
      })();
      return jsonSniffed({ id });
    },
  },
  {
    method: "GET",
    path: "/async/task/{id}",
    handler: (ctx, e) => {
      const t = getTask(e, ctx.params.id!);
      if (!t) return errorBody(ErrCode.undefined, `async task: ${ctx.params.id} not found`);
      return jsonSniffed({ id: t.id, status: t.status, message: t.message, createdTimestamp: t.createdTimestamp, updatedTimestamp: t.updatedTimestamp });
    },
  },
  {
    method: "POST",
    path: "/async/task/{id}/cancel",
    handler: (ctx, e) => {
      const id = ctx.params.id!;
      const t = getTask(e, id);
      if (!t) return errorBody(ErrCode.undefined, `async task: ${id} not found`);
      e.dataTasks.get(id)?.abort();
      putTask(e, { ...t, status: "cancel", updatedTimestamp: Math.floor(Date.now() / 1000) });
      return sentence("cancel success");
    },
  },
];
