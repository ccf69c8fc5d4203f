/** Rules: the list with live state and rates, lifecycle buttons, and a form to create one (the SQL editor checks as you type). */
import { call } from "./api.ts";
import { fill, fmtRate, h } from "./dom.ts";
import { loadNames, sqlEditor } from "./editor.ts";
import { sinkForm } from "./sink-form.ts";
import { live } from "./live.ts";
import type { Sample } from "./types.ts";

export async function ruleAction(id: string, action: "start" | "stop" | "restart" | "delete", msg: HTMLElement): Promise<void> {
  try {
    const r = action === "delete" ? await call("DELETE", `/rules/${encodeURIComponent(id)}`) : await call("POST", `/rules/${encodeURIComponent(id)}/${action}`);
    fill(msg, h("span", { class: "ok" }, String(r ?? "")));
  } catch (e) {
    fill(msg, h("span", { class: "err" }, (e as Error).message));
  }
}

export function rulesPage(main: HTMLElement): void {
  const msg = h("div", { id: "rules-msg" });
  const body = h("tbody");
  const form = createForm(msg);
  fill(
    main,
    h("h1", {}, "Rules"),
    msg,
    h("table", { id: "rules" }, h("thead", {}, h("tr", {}, h("th", {}, "Rule"), h("th", {}, "State"), h("th", {}, "In"), h("th", {}, "Out"), h("th", {}, "Errors"), h("th", {}, "Records out"), h("th", {}, ""))), body),
    h("h2", {}, "New rule"),
    form,
  );
  const draw = (smp: Sample) => {
    fill(
      body,
      smp.rules.length
        ? smp.rules.map((r) =>
            h(
              "tr",
              { "data-rule": r.id },
              h("td", {}, h("a", { href: `#/rules/${encodeURIComponent(r.id)}` }, r.id)),
              h("td", {}, h("span", { class: `state ${r.state.replace(/\s+/g, "_")}`, title: r.message }, r.state)),
              h("td", { class: "n", "data-k": "in" }, fmtRate(r.inRate)),
              h("td", { class: "n", "data-k": "out" }, fmtRate(r.outRate)),
              h("td", { class: "n" }, String(r.errors)),
              h("td", { class: "n", "data-k": "records-out" }, String(r.out)),
              h(
                "td",
                {},
                h("div", { class: "row" }, ...(["start", "stop", "restart"] as const).map((a) => h("button", { "data-action": a, onclick: () => void ruleAction(r.id, a, msg) }, a))),
              ),
            ),
          )
        : h("tr", {}, h("td", { colspan: 7, class: "muted" }, "No rules yet.")),
    );
  };
  if (live.last) draw(live.last);
  live.listener = draw;
}

function createForm(msg: HTMLElement): HTMLElement {
  const id = h("input", { id: "new-rule-id", placeholder: "rule id" }) as HTMLInputElement;
  const sql = sqlEditor({ id: "new-rule-sql", kind: "rule", names: loadNames(), placeholder: "SELECT * FROM demo WHERE temperature > 20" });
  const actions = h("textarea", { id: "new-rule-actions" }) as HTMLTextAreaElement;
  actions.value = '[{"log": {}}]';
  const create = async () => {
    try {
      const acts = parseActions(actions.value);
      const r = await call("POST", "/rules", { id: id.value, sql: sql.input.value, actions: acts });
      fill(msg, h("span", { class: "ok" }, String(r ?? "")));
    } catch (e) {
      fill(msg, h("span", { class: "err" }, (e as Error).message));
      void sql.check();
    }
  };
  return h(
    "div",
    {},
    h("label", {}, "Id", id),
    h("div", { class: "field" }, h("span", { class: "muted" }, "SQL"), sql.el),
    h("label", {}, "Actions (JSON)", actions),
    sinkForm(actions, msg),
    h("div", { class: "row" }, h("button", { class: "primary", id: "new-rule-create", onclick: () => void create() }, "Create and start")),
  );
}

/** The actions textarea as JSON, or an error naming the field. */
export function parseActions(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new Error(`actions: ${(e as Error).message}`);
  }
}
