/** `/config/uploads` (rest-api.md §11): files under `<data>/uploads`, never outside it. */
import { mkdirSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { ErrCode, errorText } from "../errors.ts";
import { field, isObject, readJson, unmarshalTypeError } from "./body.ts";
import type { Engine } from "./engine.ts";
import { readFileRef } from "./file-ref.ts";
import { errorBody, htmlEscape, json, sentence } from "./respond.ts";
import type { RouteDef } from "./router.ts";
import { safeUploadPath } from "./uploads-fs.ts";

export const uploadRoutes: RouteDef<Engine>[] = [
  {
    method: "POST",
    path: "/config/uploads",
    handler: async (ctx, e) => {
      // The exact value decides: `application/json; charset=utf-8` goes the multipart way [quirk].
      if (ctx.headers.get("Content-Type") === "application/json") {
        const b = await readJson(ctx);
        if (!b.ok) return errorBody(ErrCode.undefined, `Invalid body: Error decoding file json: ${b.error}`);
        if (!isObject(b.value)) return errorBody(ErrCode.undefined, `Invalid body: Error decoding file json: ${unmarshalTypeError(b.value, "server.fileContent")}`);
        const name = field(b.value, "name");
        const content = field(b.value, "content");
        const file = field(b.value, "file");
        if ((typeof content !== "string" || content === "") && (typeof file !== "string" || file === ""))
          return errorBody(ErrCode.undefined, "Invalid body: missing necessary field: invalid body: content or FilePath is required");
        if (typeof name !== "string" || name === "") return errorBody(ErrCode.undefined, "Invalid body: missing necessary field: invalid body: name is required");
        let path: string;
        try {
          path = safeUploadPath(e.uploadsDir, name);
          const data = typeof content === "string" && content !== "" ? content : await readFileRef(e, file as string);
          mkdirSync(dirname(path), { recursive: true });
          writeFileSync(path, data);
        } catch (err) {
          return errorBody(ErrCode.undefined, `Upload error: getFile has error: ${errorText(err)}`);
        }
        e.kv.set("upload", name, b.text);
        return sentence(htmlEscape(path), 201);
      }
      let form: Awaited<ReturnType<Request["formData"]>>;
      try {
        form = await ctx.request.formData();
      } catch {
        return errorBody(ErrCode.undefined, "Error parse the multi part form: request Content-Type isn't multipart/form-data");
      }
      const f = form.get("uploadFile");
      if (!f || typeof f === "string") return errorBody(ErrCode.undefined, "Error Retrieving the File: http: no such file");
      try {
        const path = safeUploadPath(e.uploadsDir, f.name);
        mkdirSync(dirname(path), { recursive: true });
        writeFileSync(path, new Uint8Array(await f.arrayBuffer()));
        return sentence(htmlEscape(path), 201);
      } catch (err) {
        return errorBody(ErrCode.undefined, `Error saving the file: ${errorText(err)}`);
      }
    },
  },
  {
    method: "GET",
    path: "/config/uploads",
    handler: (_c, e) => {
      let names: string[] = [];
      try {
        names = readdirSync(e.uploadsDir).sort();
      } catch {
        // no uploads dir yet
      }
      return json(names.map((n) => join(e.uploadsDir, n)));
    },
  },
  {
    method: "DELETE",
    path: "/config/uploads/{name}",
    handler: (ctx, e) => {
      const name = ctx.params.name!;
      try {
        const path = safeUploadPath(e.uploadsDir, name);
        const st = statSync(path, { throwIfNoEntry: false });
        if (!st) return errorBody(ErrCode.undefined, `Error deleting the file: remove ${name}: no such file or directory`);
        rmSync(path, { recursive: false });
        e.kv.delete("upload", name);
        return sentence("ok");
      } catch (err) {
        return errorBody(ErrCode.undefined, `Error deleting the file: ${errorText(err)}`);
      }
    },
  },
];
