/** `/ruleset/export|import` (rest-api.md §9): streams, tables and rules as one JSON document. */
import { ErrCode, errorText } from "../errors.ts";
import { field, isObject, readJson, unmarshalTypeError } from "./body.ts";
import type { Engine } from "./engine.ts";
import { readFileRef } from "./file-ref.ts";
import { download, errorBody, fromError, goJson, sentence } from "./respond.ts";
import type { Ctx, RouteDef } from "./router.ts";
import { exportRuleset, importRuleset } from "./transfer.ts";

/** `{"content"}` or `{"file"}` (exactly one); the document text or an error response. */
export async function contentOrFile(ctx: Ctx, e: Engine, suffix: string): Promise<string | Response> {
  const b = await readJson(ctx);
  if (!b.ok) return errorBody(ErrCode.undefined, `Invalid body: Error decoding json: ${b.error}`);
  if (!isObject(b.value)) return errorBody(ErrCode.undefined, `Invalid body: Error decoding json: ${unmarshalTypeError(b.value, "server.fileContent")}`);
  const content = field(b.value, "content");
  const file = field(b.value, "file");
  const hasC = typeof content === "string" && content !== "";
  const hasF = typeof file === "string" && file !== "";
  if (hasC && hasF) return errorBody(ErrCode.undefined, `Invalid body: Cannot specify both content and file${suffix}`);
  if (!hasC && !hasF) return errorBody(ErrCode.undefined, `Invalid body: must specify content or file${suffix}`);
  if (hasC) return content as string;
  try {
    return await readFileRef(e, file as string);
  } catch (err) {
    return errorBody(ErrCode.undefined, `Fail to read file: ${errorText(err)}`);
  }
}

export const rulesetRoutes: RouteDef<Engine>[] = [
  {
    method: "POST",
    path: "/ruleset/export",
    handler: (_c, e) => {
      try {
        return download(goJson(exportRuleset(e)));
      } catch (err) {
        return fromError(err, "export error");
      }
    },
  },
  {
    method: "POST",
    path: "/ruleset/import",
    handler: async (ctx, e) => {
      const text = await contentOrFile(ctx, e, ": bad request");
      if (text instanceof Response) return text;
      try {
        const c = importRuleset(e, text);
        return sentence(`imported ${c.streams} streams, ${c.tables} tables and ${c.rules} rules`);
      } catch (err) {
        return fromError(err);
      }
    },
  },
];
