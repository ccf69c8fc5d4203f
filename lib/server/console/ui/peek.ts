/**
 * The rule page's data peek: off until the user asks; then, once a second, the last few rows each
 * node took in and pushed out (sampled and cut by the server, `/ui/api/rules/{id}/peek`), so a
 * user sees where a row was dropped or changed. A node's input is what the nodes before it in the
 * topology pushed (past a sink's own steps, which have no tap). Leaving the page or pressing the button again ends it.
 */
import { call } from "./api.ts";
import { fill, h } from "./dom.ts";
import type { Topo } from "./types.ts";

interface PeekNode {
  seen: number;
  rows: { t: number; data: string }[];
}

let timer: ReturnType<typeof setInterval> | undefined;
let peeking = "";

/** Ends the peek of the page being left. */
export function leavePeek(): void {
  if (timer) clearInterval(timer);
  timer = undefined;
  if (peeking) void call("DELETE", `/ui/api/rules/${encodeURIComponent(peeking)}/peek`).catch(() => {});
  peeking = "";
}

function rowsCell(list: PeekNode[], k: string): HTMLElement {
  const rows = list.flatMap((n) => n.rows).sort((a, b) => a.t - b.t).slice(-5);
  return h("td", { "data-k": k }, rows.length ? rows.map((r) => h("pre", { class: "payload" }, r.data)) : h("span", { class: "muted" }, "—"));
}

/**
 * What node `n` took in: the output of the nodes before it; a node without a tap of its own (a
 * sink's transform and encode steps) passes on what it took in.
 */
function inputs(n: string, preds: (n: string) => string[], nodes: Record<string, PeekNode>, seen: Set<string>): PeekNode[] {
  const out: PeekNode[] = [];
  for (const p of preds(n)) {
    if (seen.has(p)) continue;
    seen.add(p);
    const own = nodes[p];
    if (own) out.push(own);
    else out.push(...inputs(p, preds, nodes, seen));
  }
  return out;
}

function draw(table: HTMLElement, topo: Topo | null | undefined, nodes: Record<string, PeekNode>): void {
  const names = topo ? [...new Set([...topo.sources, ...Object.keys(topo.edges), ...Object.values(topo.edges).flat()])] : Object.keys(nodes);
  const preds = (n: string) => (topo ? Object.entries(topo.edges).filter(([, to]) => to.includes(n)).map(([from]) => from) : []);
  fill(
    table,
    h("thead", {}, h("tr", {}, h("th", {}, "Node"), h("th", { class: "n" }, "Rows out"), h("th", {}, "Last in"), h("th", {}, "Last out"))),
    h(
      "tbody",
      {},
      names.map((n) => {
        const ins = inputs(n, preds, nodes, new Set());
        const out = nodes[n];
        return h("tr", { "data-node": n }, h("td", {}, n), h("td", { class: "n" }, out ? String(out.seen) : ""), rowsCell(ins, "in"), out ? rowsCell([out], "out") : h("td", { class: "muted" }, n.startsWith("sink_") ? "(sink)" : "—"));
      }),
    ),
  );
}

export function peekView(id: string, topo: () => Topo | null | undefined): HTMLElement {
  const msg = h("div", { id: "peek-msg", class: "muted" }, "Off: the rule runs untouched. Sampled rows, at most 5 per node, cut at 512 bytes.");
  const table = h("table", { id: "peek" });
  const button = h("button", { id: "peek-toggle" }, "Show data") as HTMLButtonElement;
  const poll = async () => {
    try {
      const r = (await call("POST", `/ui/api/rules/${encodeURIComponent(id)}/peek`)) as { nodes: Record<string, PeekNode> };
      if (peeking !== id) return;
      fill(msg, h("span", { class: "ok" }, "On: sampling what each node pushes."));
      draw(table, topo(), r.nodes);
    } catch (e) {
      fill(msg, h("span", { class: "err" }, (e as Error).message));
    }
  };
  button.addEventListener("click", () => {
    if (peeking === id) {
      leavePeek();
      fill(button, "Show data");
      fill(msg, "Off.");
      fill(table);
      return;
    }
    leavePeek();
    peeking = id;
    fill(button, "Hide data");
    void poll();
    timer = setInterval(() => void poll(), 1000);
  });
  return h("div", {}, h("div", { class: "row" }, button, msg), table);
}
