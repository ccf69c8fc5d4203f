/**
 * Editing a rule in place: its SQL in the editor and its actions as JSON, saved with
 * `PUT /rules/{id}` (which restarts it). The server plans the new definition before it replaces
 * anything, so a definition that fails leaves the rule running as it was; the page says so.
 */
import { call } from "./api.ts";
import { fill, h } from "./dom.ts";
import { loadNames, sqlEditor } from "./editor.ts";
import { sinkForm } from "./sink-form.ts";
import { parseActions } from "./page-rules.ts";

export function ruleEditor(id: string, def: Record<string, unknown>, saved: () => void): HTMLElement {
  const msg = h("div", { id: "edit-msg" });
  const sql = sqlEditor({ id: "edit-sql", kind: "rule", names: loadNames(), value: typeof def.sql === "string" ? def.sql : "" });
  const actions = h("textarea", { id: "edit-actions" }) as HTMLTextAreaElement;
  actions.value = JSON.stringify(def.actions ?? [], null, 2);
  const save = async () => {
    try {
      const r = await call("PUT", `/rules/${encodeURIComponent(id)}`, { ...def, sql: sql.input.value, actions: parseActions(actions.value) });
      fill(msg, h("span", { class: "ok" }, String(r ?? "")));
      saved();
    } catch (e) {
      fill(msg, h("span", { class: "err" }, (e as Error).message), h("div", { class: "muted", "data-k": "kept" }, "Not saved: the rule keeps its previous definition."));
      void sql.check();
    }
  };
  return h(
    "div",
    { id: "rule-edit" },
    h("div", { class: "field" }, h("span", { class: "muted" }, "SQL"), sql.el),
    h("label", {}, "Actions (JSON)", actions),
    sinkForm(actions, msg),
    h("div", { class: "row" }, h("button", { class: "primary", id: "edit-save", onclick: () => void save() }, "Save and restart")),
    msg,
  );
}
