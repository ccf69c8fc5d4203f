/** One rule: its SQL (or graph), lifecycle buttons, the topology with per-node rates, its errors grouped with their payloads, the editor. */
import { call } from "./api.ts";
import { topology } from "./charts.ts";
import { fill, fmtRate, fmtTime, h } from "./dom.ts";
import { live } from "./live.ts";
import { ruleAction } from "./page-rules.ts";
import { peekView } from "./peek.ts";
import { ruleEditor } from "./rule-edit.ts";
import { traceView } from "./trace.ts";
import type { Sample } from "./types.ts";

export function rulePage(main: HTMLElement, id: string): void {
  const msg = h("div", { id: "rule-msg" });
  const def = h("pre", { id: "rule-def" }, "…");
  const json = h("div");
  const edit = h("div");
  const state = h("div", { id: "rule-state" });
  const topo = h("div", { class: "topo", id: "rule-topo" }, h("div", { class: "muted" }, "Waiting for the first sample…"));
  const nodes = h("tbody");
  const errors = h("tbody");
  fill(
    main,
    h("h1", {}, "Rule ", h("code", {}, id)),
    h("div", { class: "row" }, state, ...(["start", "stop", "restart"] as const).map((a) => h("button", { "data-action": a, onclick: () => void ruleAction(id, a, msg) }, a)), h("button", { "data-action": "delete", onclick: () => void ruleAction(id, "delete", msg).then(() => (location.hash = "#/rules")) }, "delete")),
    msg,
    h("h2", {}, "Topology"),
    topo,
    h("h2", {}, "Nodes"),
    h("table", { id: "rule-nodes" }, h("thead", {}, h("tr", {}, h("th", {}, "Node"), h("th", {}, "In"), h("th", {}, "Out"), h("th", {}, "Records in"), h("th", {}, "Records out"), h("th", {}, "Errors"), h("th", {}, "Latency"), h("th", {}, "Last error"))), nodes),
    h("h2", {}, "Data peek"),
    peekView(id, () => live.last?.rule?.topo),
    h("h2", {}, "Traces"),
    traceView(id),
    h("h2", {}, "Errors, by node and message"),
    h("table", { id: "rule-errors" }, h("thead", {}, h("tr", {}, h("th", {}, "Node"), h("th", {}, "Error"), h("th", { class: "n" }, "Count"), h("th", {}, "First"), h("th", {}, "Last"), h("th", {}, "Last payload"))), errors),
    h("h2", {}, "Definition"),
    def,
    json,
    edit,
  );
  const load = () =>
    call("GET", `/rules/${encodeURIComponent(id)}`).then(
      (d) => {
        const r = d as { sql?: string; graph?: unknown };
        fill(def, r.sql ? r.sql : JSON.stringify(r.graph ?? d, null, 2));
        fill(json, r.sql ? h("details", {}, h("summary", {}, "Rule JSON"), h("pre", {}, JSON.stringify(d, null, 2))) : null);
        if (r.sql && !edit.childElementCount) fill(edit, h("details", { id: "rule-edit-open" }, h("summary", {}, "Edit"), ruleEditor(id, d as Record<string, unknown>, () => void load())));
      },
      (e: Error) => fill(def, h("span", { class: "err" }, e.message)),
    );
  void load();
  let shape = "";
  const draw = (smp: Sample) => {
    const r = smp.rules.find((x) => x.id === id);
    fill(state, r ? h("span", { class: `state ${r.state.replace(/\s+/g, "_")}`, "data-state": r.state, title: r.message }, r.state) : h("span", { class: "muted" }, "not found"), r?.message ? h("span", { class: "muted" }, ` ${r.message}`) : null);
    const d = smp.rule;
    if (!d) return;
    if (d.topo) {
      fill(topo, topology(d.topo, d.nodes));
      shape = JSON.stringify(d.topo);
    } else if (!shape) fill(topo, h("div", { class: "muted" }, "The topology appears once the rule has run."));
    fill(
      nodes,
      d.nodes.map((n) =>
        h(
          "tr",
          { "data-node": `${n.kind}_${n.name}` },
          h("td", {}, `${n.kind}_${n.name}`),
          h("td", { class: "n" }, fmtRate(n.inRate)),
          h("td", { class: "n" }, fmtRate(n.outRate)),
          h("td", { class: "n" }, String(n.in)),
          h("td", { class: "n" }, String(n.out)),
          h("td", { class: "n" }, String(n.errors)),
          h("td", { class: "n" }, `${n.latencyUs} µs`),
          h("td", { class: "err" }, n.lastException),
        ),
      ),
    );
    fill(
      errors,
      d.errors.length
        ? d.errors.map((e) =>
            h(
              "tr",
              { "data-node": e.node },
              h("td", {}, e.node),
              h("td", { class: "err", "data-k": "message" }, e.message),
              h("td", { class: "n", "data-k": "count" }, String(e.count)),
              h("td", { class: "time" }, fmtTime(e.first)),
              h("td", { class: "time" }, fmtTime(e.last)),
              h("td", {}, e.payload ? h("pre", { class: "payload", "data-k": "payload" }, e.payload) : h("span", { class: "muted" }, "—")),
            ),
          )
        : h("tr", {}, h("td", { colspan: 6, class: "muted" }, "No errors.")),
    );
  };
  if (live.last?.rule?.id === id) draw(live.last);
  live.listener = draw;
}
