/** `/udf/javascript` (rest-api.md §14.5): JavaScript UDFs, stored in KV and run for real. */
import { ErrCode, errorText, TooLargeError } from "../errors.ts";
import type { ScriptDef } from "../functions/js-udf.ts";
import { idError } from "../store/ids.ts";
import { field, isObject, readJson } from "./body.ts";
import type { Engine } from "./engine.ts";
import { errorBody, json, sentence } from "./respond.ts";
import { idChecked, type Ctx, type RouteDef } from "./router.ts";

async function scriptBody(ctx: Ctx, prefix: string): Promise<ScriptDef | Response> {
  const b = await readJson(ctx);
  if (!b.ok) return errorBody(ErrCode.undefined, `Invalid body: Error decoding json: ${b.error}`);
  if (!isObject(b.value)) return errorBody(ErrCode.undefined, "Invalid body: Error decoding json: json: cannot unmarshal into Go value of type javascript.Script");
  const id = String(field(b.value, "id") ?? "");
  const ie = idError(id);
  if (ie) return errorBody(ErrCode.undefined, `${prefix}: ${ie}`);
  const script = field(b.value, "script");
  if (typeof script !== "string" || script === "") return errorBody(ErrCode.undefined, `${prefix}: script is required`);
  return { id, description: String(field(b.value, "description") ?? ""), script, isAgg: field(b.value, "isAgg") === true };
}

export const udfRoutes: RouteDef<Engine>[] = [
  { method: "GET", path: "/udf/javascript", handler: (_c, e) => json([...e.scripts.keys()].sort()) },
  {
    method: "POST",
    path: "/udf/javascript",
    handler: async (ctx, e) => {
      const prefix = "javascript function create command error";
      const s = await scriptBody(ctx, prefix);
      if (s instanceof Response) return s;
      if (e.scripts.has(s.id)) return errorBody(ErrCode.undefined, `${prefix}: javascript function ${s.id} already exists`);
      if (e.functions.lookup(s.id)) return errorBody(ErrCode.undefined, `${prefix}: function ${s.id} already exists as a built-in function`);
      try {
        await e.addScript(s);
      } catch (err) {
        return errorBody(ErrCode.undefined, `${prefix}: ${errorText(err)}`, err instanceof TooLargeError ? 413 : undefined);
      }
      return sentence(`javascript function ${s.id} is created`, 201);
    },
  },
  {
    method: "GET",
    path: "/udf/javascript/{id}",
    handler: idChecked("id", (ctx, e) => {
      const s = e.scripts.get(ctx.params.id!);
      if (!s) return errorBody(ErrCode.notFound, `describe javascript function ${ctx.params.id} error: not found`);
      return json({ id: s.id, description: s.description, script: s.script, isAgg: s.isAgg });
    }),
  },
  {
    method: "DELETE",
    path: "/udf/javascript/{id}",
    handler: idChecked("id", (ctx, e) => {
      const id = ctx.params.id!;
      if (!e.scripts.has(id)) return errorBody(ErrCode.undefined, `delete javascript function ${id} error: not found`);
      e.removeScript(id);
      return sentence(`javascript function ${id} is deleted`);
    }),
  },
  {
    method: "PUT",
    path: "/udf/javascript/{id}",
    handler: idChecked("id", async (ctx, e) => {
      const prefix = "javascript function update command error";
      const s = await scriptBody(ctx, prefix);
      if (s instanceof Response) return s;
      if (s.id !== ctx.params.id) return errorBody(ErrCode.undefined, `${prefix}: id mismatch`);
      if (!e.scripts.has(s.id) && e.functions.lookup(s.id)) return errorBody(ErrCode.undefined, `${prefix}: function ${s.id} already exists as a built-in function`);
      try {
        await e.addScript(s);
      } catch (err) {
        return errorBody(ErrCode.undefined, `${prefix}: ${errorText(err)}`, err instanceof TooLargeError ? 413 : undefined);
      }
      return sentence(`javascript function ${s.id} is updated`);
    }),
  },
];
