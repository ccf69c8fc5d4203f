/**
 * The rule page's trace view, over eKuiper's trace routes: start or stop tracing the rule
 * (`/rules/{id}/trace/start|stop`), list its recorded traces (`/trace/rule/{id}`), and show one
 * (`/trace/{traceId}`) as its span tree through the nodes: each span's start and duration on a
 * shared time line, and the data it carried.
 */
import { call } from "./api.ts";
import { fill, h } from "./dom.ts";

interface TraceNode {
  name: string;
  spanID: string;
  attribute?: Record<string, string>;
  startTime: string;
  endTime: string;
  ChildSpan: TraceNode[] | null;
}

/** ms since the epoch of an RFC 3339 time with up to nanoseconds (Date.parse keeps only ms). */
function ms(t: string): number {
  const m = /^(.*T\d\d:\d\d:\d\d)(\.\d+)?(.*)$/.exec(t);
  return m ? Date.parse(m[1]! + m[3]!) + Number(`0${m[2] ?? ""}`) * 1000 : Date.parse(t);
}

const fmtMs = (v: number) => (v >= 100 ? `${v.toFixed(0)} ms` : v >= 1 ? `${v.toFixed(2)} ms` : `${(v * 1000).toFixed(0)} µs`);

function spans(root: TraceNode): HTMLElement {
  const t0 = ms(root.startTime);
  const flat: { n: TraceNode; depth: number }[] = [];
  const walk = (n: TraceNode, depth: number) => {
    flat.push({ n, depth });
    for (const c of n.ChildSpan ?? []) walk(c, depth + 1);
  };
  walk(root, 0);
  const end = Math.max(...flat.map((f) => ms(f.n.endTime)));
  const total = Math.max(end - t0, 1e-3);
  return h(
    "table",
    { id: "trace-spans" },
    h("thead", {}, h("tr", {}, h("th", {}, "Span"), h("th", { class: "n" }, "Start"), h("th", { class: "n" }, "Duration"), h("th", {}, "Time line"), h("th", {}, "Data"))),
    h(
      "tbody",
      {},
      flat.map(({ n, depth }) => {
        const a = ms(n.startTime) - t0;
        const d = ms(n.endTime) - ms(n.startTime);
        const bar = h("div", { class: "bar" });
        // Offsets through the CSSOM (no style attribute for the CSP to refuse).
        bar.style.marginLeft = `${((a / total) * 100).toFixed(2)}%`;
        bar.style.width = `${Math.max(0.5, (d / total) * 100).toFixed(2)}%`;
        const data = n.attribute?.data ?? n.attribute?.error ?? "";
        return h(
          "tr",
          { "data-span": n.name },
          h("td", { class: `depth-${Math.min(depth, 8)}` }, n.name),
          h("td", { class: "n", "data-k": "start" }, `+${fmtMs(a)}`),
          h("td", { class: "n", "data-k": "duration" }, fmtMs(d)),
          h("td", { class: "timeline" }, bar),
          h("td", {}, data ? h("pre", { class: "payload" }, data) : h("span", { class: "muted" }, "—")),
        );
      }),
    ),
  );
}

export function traceView(id: string): HTMLElement {
  const msg = h("div", { id: "trace-msg" });
  const list = h("select", { id: "trace-list" }) as HTMLSelectElement;
  const tree = h("div", { id: "trace-tree" });
  const rule = encodeURIComponent(id);
  const act = async (what: "start" | "stop") => {
    try {
      await call("POST", `/rules/${rule}/trace/${what}`, what === "start" ? { strategy: "always" } : undefined);
      fill(msg, h("span", { class: "ok" }, what === "start" ? "Tracing every message." : "Tracing stopped."));
      if (what === "stop") void refresh();
    } catch (e) {
      fill(msg, h("span", { class: "err" }, (e as Error).message));
    }
  };
  const show = async () => {
    if (!list.value) return fill(tree);
    try {
      fill(tree, spans((await call("GET", `/trace/${encodeURIComponent(list.value)}`)) as TraceNode));
    } catch (e) {
      fill(tree, h("span", { class: "err" }, (e as Error).message));
    }
  };
  const refresh = async () => {
    const ids = ((await call("GET", `/trace/rule/${rule}?limit=20`).catch(() => [])) ?? []) as string[];
    fill(list, ids.length ? ids.map((t) => h("option", { value: t }, t)) : h("option", { value: "" }, "no traces recorded"));
    void show();
  };
  list.addEventListener("change", () => void show());
  void refresh();
  return h(
    "div",
    {},
    h(
      "div",
      { class: "row" },
      h("button", { id: "trace-start", onclick: () => void act("start") }, "Start tracing"),
      h("button", { id: "trace-stop", onclick: () => void act("stop") }, "Stop tracing"),
      h("button", { id: "trace-refresh", onclick: () => void refresh() }, "Recorded traces"),
      list,
      msg,
    ),
    tree,
  );
}
