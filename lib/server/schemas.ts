/**
 * `/schemas/{type}` (rest-api.md §14.4): the protobuf schema registry — list, create (inline
 * `content` or a `file` path/URL, §11.3), describe, update, delete, multipart upload. The `custom`
 * type (a Go plugin .so) is a type eKuiper knows, so it lists empty and its writes answer that
 * floe does not load Go plugins; any other type is unknown, with eKuiper's texts.
 */
import { EngineError, ErrCode, errorText, TooLargeError } from "../errors.ts";
import { isZip, readZip } from "../formats/zip.ts";
import { CUSTOM_FORMAT_ERROR, type SchemaEntry } from "../formats/schema-registry.ts";
import { idError } from "../store/ids.ts";
import { field, isObject, readJson, unmarshalTypeError } from "./body.ts";
import type { Engine } from "./engine.ts";
import { readFileRef } from "./file-ref.ts";
import { errorBody, goJson, json, sentence } from "./respond.ts";
import type { Ctx, RouteDef } from "./router.ts";

type R = RouteDef<Engine>;

const KNOWN = new Set(["protobuf", "custom"]);
const MAX_VERSION = 4096;

/** eKuiper's `schema.Info` as a request body carries it. */
interface Info {
  type: string;
  name: string;
  content: string;
  file: string;
  soFile: string;
  version: string;
}

const err = (m: string, status?: number) => errorBody(ErrCode.undefined, m, status);
/** A schema past the compile budget (or a size limit) is 413, any other refusal 400. */
const refusedStatus = (x: unknown) => (x instanceof TooLargeError ? 413 : 400);

/** The body decoded over `base` (Go decodes into a struct pre-filled with the path's values). */
async function decodeInfo(ctx: Ctx, base: Pick<Info, "type" | "name">): Promise<Info | Response> {
  const b = await readJson(ctx);
  if (!b.ok) return err(`Invalid body: Error decoding schema json: ${b.error}`);
  if (!isObject(b.value)) return err(`Invalid body: Error decoding schema json: ${unmarshalTypeError(b.value, "schema.Info")}`);
  const body = b.value;
  const str = (k: string, dflt = ""): string | Response => {
    const v = field(body, k);
    if (v === undefined || v === null) return dflt;
    if (typeof v !== "string") return err(`Invalid body: Error decoding schema json: json: cannot unmarshal ${typeof v === "number" ? "number" : Array.isArray(v) ? "array" : typeof v === "boolean" ? "bool" : "object"} into Go struct field Info.${k} of type string`);
    return v;
  };
  const out: Record<string, string> = {};
  for (const k of ["type", "name", "content", "file", "soFile", "version"] as const) {
    const v = str(k, k === "type" ? base.type : k === "name" ? base.name : "");
    if (v instanceof Response) return v;
    out[k] = v;
  }
  return out as unknown as Info;
}

/** `Info.Validate` (schema.go), then the id rule of rest-api.md §1.8: the texts after `Invalid body: `. */
function validate(i: Info): string | undefined {
  if (i.name === "") return "name is required";
  const ie = idError(i.name);
  if (ie) return ie;
  if (i.content !== "" && i.file !== "") return "cannot specify both content and file";
  if (i.type === "protobuf") {
    if (i.content === "" && i.file === "") return "must specify content or file";
  } else if (i.type === "custom") {
    if (i.soFile === "") return "soFile is required";
  } else return `unsupported schema type ${i.type}`;
  return undefined;
}

/** The stored version may not be lowered (plain string comparison; equal is allowed). */
function versionError(e: Engine, name: string, version: string): string | undefined {
  const cur = e.schemas.get(name)?.version ?? "";
  return cur !== "" && version < cur ? `schema protobuf.${name} already registered with a newer version ${cur}` : undefined;
}

async function contentOf(e: Engine, i: Info): Promise<string> {
  return i.content !== "" ? i.content : await readFileRef(e, i.file);
}

function describe(s: SchemaEntry): Record<string, string> {
  const o: Record<string, string> = { type: "protobuf", name: s.name, content: s.content, file: s.file };
  if (s.version) o.version = s.version;
  return o;
}

/**
 * A zip upload: `<name>.proto` and the files it imports, each a top-level `<id>.proto` that
 * becomes a schema of its own (imports resolve by schema name, as files side by side do in
 * eKuiper's schema directory). The version belongs to `<name>`.
 */
function zipSchemas(e: Engine, name: string, version: string, bytes: Uint8Array): SchemaEntry[] {
  const out: SchemaEntry[] = [];
  const text = new TextDecoder();
  for (const z of readZip(bytes)) {
    if (!z.name.endsWith(".proto")) continue;
    const stem = z.name.slice(0, -".proto".length);
    if (stem.includes("/") || idError(stem)) throw new EngineError(`zip entry ${z.name}: only top-level <id>.proto files are read (imports resolve by schema name)`, ErrCode.undefined);
    out.push({ name: stem, content: text.decode(z.data), file: "", version: stem === name ? version : (e.schemas.get(stem)?.version ?? "") });
  }
  if (!out.some((s) => s.name === name)) throw new EngineError(`zip archive has no ${name}.proto`, ErrCode.undefined);
  return out;
}

/** The upload route's replies: `application/json`, no trailing newline **[quirk]**. */
function uploadReply(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  return new Response(goJson(body), { status, headers: { "Content-Type": "application/json", ...headers } });
}
const uploadError = (status: number, message: string) => uploadReply(status, { error: ErrCode.undefined, message });

export const schemaRoutes: R[] = [
  {
    method: "GET",
    path: "/schemas/{type}",
    handler: (ctx, e) => {
      const t = ctx.params.type!;
      if (t === "protobuf") return json(e.schemas.names());
      if (t === "custom") return json([]);
      return err(`schema type ${t} not found`);
    },
  },
  {
    method: "POST",
    path: "/schemas/{type}",
    handler: async (ctx, e) => {
      const prefix = "schema create command error";
      const i = await decodeInfo(ctx, { type: ctx.params.type!, name: "" });
      if (i instanceof Response) return i;
      const bad = validate(i);
      if (bad) return err(`Invalid body: ${bad}`);
      if (i.type === "custom") return err(`${prefix}: ${CUSTOM_FORMAT_ERROR}`);
      if (e.schemas.get(i.name)) return err(`${prefix}: schema protobuf.${i.name} already registered`);
      try {
        e.putSchema(i.name, await contentOf(e, i), i.version);
      } catch (x) {
        return err(`${prefix}: ${errorText(x)}`, refusedStatus(x));
      }
      return sentence(`protobuf schema ${i.name} is created`, 201);
    },
  },
  {
    method: "PUT",
    path: "/schemas/{type}/{name}/upload",
    handler: async (ctx, e) => {
      const t = ctx.params.type!;
      const name = ctx.params.name!;
      if (!(ctx.headers.get("Content-Type") ?? "").toLowerCase().startsWith("multipart/form-data"))
        return uploadError(415, "Invalid content type: content type must be multipart/form-data");
      let form: Awaited<ReturnType<Request["formData"]>>;
      try {
        form = await ctx.request.formData();
      } catch (x) {
        return uploadError(400, `Invalid multipart body: ${errorText(x)}`);
      }
      const files = form.getAll("file");
      if (files.length === 0) return uploadError(400, "Invalid multipart body: file field is required");
      if (files.length > 1) return uploadError(400, "Invalid multipart body: file field must appear exactly once");
      const versions = form.getAll("version");
      if (versions.length > 1) return uploadError(400, "Invalid multipart body: version field must appear at most once");
      const version = versions.length ? String(versions[0]) : "";
      if (Buffer.byteLength(version) > MAX_VERSION) return uploadError(400, "Invalid multipart body: version field is too large");
      if (!KNOWN.has(t)) return uploadError(400, `Invalid schema: schema type ${t} not found`);
      const ie = idError(name);
      if (ie) return uploadError(400, `Invalid schema: ${ie}`);
      if (t === "custom") return uploadError(400, `Invalid schema: ${CUSTOM_FORMAT_ERROR}`);
      const f = files[0]!;
      const bytes = typeof f === "string" ? new TextEncoder().encode(f) : new Uint8Array(await f.arrayBuffer());
      const ve = versionError(e, name, version);
      if (ve) return uploadError(400, `schema upsert error: ${ve}`);
      const existed = !!e.schemas.get(name);
      try {
        e.putSchemas(isZip(bytes) ? zipSchemas(e, name, version, bytes) : [{ name, content: new TextDecoder().decode(bytes), file: "", version }]);
      } catch (x) {
        return uploadError(refusedStatus(x), `Invalid schema: ${errorText(x)}`);
      }
      return uploadReply(existed ? 200 : 201, { type: t, name }, { Location: `/schemas/${t}/${name}` });
    },
  },
  {
    method: "PUT",
    path: "/schemas/{type}/{name}",
    handler: async (ctx, e) => {
      const prefix = "schema update command error";
      const t = ctx.params.type!;
      const name = ctx.params.name!;
      const i = await decodeInfo(ctx, { type: t, name });
      if (i instanceof Response) return i;
      // eKuiper's handler panics here **[quirk] panic**: floe answers 500 with the reason (rest-api.md §1.7).
      if (i.type !== t || i.name !== name) return err("Invalid body: schema type or name do not match the path", 500);
      const bad = validate(i);
      if (bad) return err(`Invalid body: ${bad}`);
      if (i.type === "custom") return err(`${prefix}: ${CUSTOM_FORMAT_ERROR}`);
      const ve = versionError(e, name, i.version);
      if (ve) return err(`${prefix}: ${ve}`);
      try {
        e.putSchema(name, await contentOf(e, i), i.version);
      } catch (x) {
        return err(`${prefix}: ${errorText(x)}`, refusedStatus(x));
      }
      return sentence(`protobuf schema ${name} is updated`);
    },
  },
  {
    method: "DELETE",
    path: "/schemas/{type}/{name}",
    handler: (ctx, e) => {
      const t = ctx.params.type!;
      const name = ctx.params.name!;
      const prefix = `delete ${t} schema ${name} error`;
      if (!KNOWN.has(t)) return err(`${prefix}: schema type ${t} not found`);
      if (t === "custom" || !e.removeSchema(name)) return err(`${prefix}: schema ${t}.${name} not found`);
      return sentence(`${t} schema ${name} is deleted`);
    },
  },
  {
    method: "GET",
    path: "/schemas/{type}/{name}",
    handler: (ctx, e) => {
      const t = ctx.params.type!;
      const name = ctx.params.name!;
      if (!KNOWN.has(t)) return err(`schema type ${t} not found in registry`);
      const s = t === "protobuf" ? e.schemas.get(name) : undefined;
      if (!s) return err(`schema type ${t} id ${name} not found in registry`);
      return json(describe(s));
    },
  },
];
