/** SVG drawn by hand: sparklines of the last ten minutes and a rule's topology. */
import { fmtRate, h, s } from "./dom.ts";
import type { NodeSample, Topo, TotalsPoint } from "./types.ts";

const W = 320;
const H = 64;
const WINDOW_MS = 10 * 60_000;

/** A sparkline of `key` over the ten minutes up to the latest point (one point a second). */
export function sparkline(points: TotalsPoint[], key: "in" | "out" | "drop", label: string): HTMLElement {
  const vals = points.map((p) => p[key]);
  const max = Math.max(0, ...vals);
  const scale = Math.max(1, max);
  const end = points.length ? points[points.length - 1]!.t : 0;
  const x = (t: number) => (W - ((end - t) / WINDOW_MS) * W).toFixed(1);
  const xy = points.map((p, i) => `${x(p.t)},${(H - 2 - (vals[i]! / scale) * (H - 6)).toFixed(1)}`);
  const last = vals.length ? vals[vals.length - 1]! : 0;
  const color = `var(--${key})`;
  const first = points.length ? x(points[0]!.t) : "0";
  return h(
    "div",
    { class: "card", "data-spark": key },
    h("div", { class: "k" }, `${label} — now ${fmtRate(last)}, max ${fmtRate(max)}`),
    s(
      "svg",
      { viewBox: `0 0 ${W} ${H}`, width: "100%", height: H, preserveAspectRatio: "none", role: "img", "aria-label": `${label} rate, last 10 minutes` },
      xy.length > 1 ? s("polyline", { points: `${first},${H} ${xy.join(" ")} ${W},${H}`, fill: color, "fill-opacity": "0.12", stroke: "none" }) : null,
      xy.length > 1 ? s("polyline", { points: xy.join(" "), fill: "none", stroke: color, "stroke-width": "1.5", "vector-effect": "non-scaling-stroke" }) : null,
    ),
  );
}

const NW = 136;
const NH = 58;
const GX = 30;
const GY = 18;

/** Columns by longest path from the sources; rows in first-seen order. */
function layers(topo: Topo): Map<string, number> {
  const depth = new Map<string, number>();
  const visit = (n: string, d: number, path: Set<string>) => {
    if (path.has(n) || (depth.get(n) ?? -1) >= d) return;
    depth.set(n, d);
    path.add(n);
    for (const m of topo.edges[n] ?? []) visit(m, d + 1, path);
    path.delete(n);
  };
  for (const src of topo.sources) visit(src, 0, new Set());
  return depth;
}

/** The topology with each node's rates, error count and last error (in the node's tooltip). */
export function topology(topo: Topo, nodes: NodeSample[]): SVGElement {
  const byName = new Map(nodes.map((n) => [`${n.kind}_${n.name}`, n]));
  const depth = layers(topo);
  const cols: string[][] = [];
  for (const [n, d] of depth) (cols[d] ??= []).push(n);
  const pos = new Map<string, { x: number; y: number }>();
  cols.forEach((col, c) => col.forEach((n, r) => pos.set(n, { x: 10 + c * (NW + GX), y: 10 + r * (NH + GY) })));
  const width = 20 + cols.length * (NW + GX) - GX;
  const height = 20 + Math.max(1, ...cols.map((c) => c.length)) * (NH + GY) - GY;
  const edges: SVGElement[] = [];
  for (const [from, tos] of Object.entries(topo.edges)) {
    const a = pos.get(from);
    if (!a) continue;
    for (const to of tos) {
      const b = pos.get(to);
      if (!b) continue;
      const x1 = a.x + NW;
      const y1 = a.y + NH / 2;
      const x2 = b.x;
      const y2 = b.y + NH / 2;
      const mx = (x1 + x2) / 2;
      edges.push(s("path", { d: `M${x1},${y1} C${mx},${y1} ${mx},${y2} ${x2 - 2},${y2}`, "marker-end": "url(#arrow)" }));
    }
  }
  const boxes: SVGElement[] = [];
  for (const [name, p] of pos) {
    const m = byName.get(name);
    const kind = name.startsWith("source_") ? "source" : name.startsWith("sink_") ? "sink" : "op";
    const bad = m && m.errors > 0;
    const label = name.replace(/^(source|op|sink)_/, "");
    boxes.push(
      s(
        "g",
        { class: `node ${kind}${bad ? " bad" : ""}`, "data-node": name, transform: `translate(${p.x},${p.y})` },
        s("title", {}, m?.lastException ? `${name}\nlast error: ${m.lastException}` : name),
        s("rect", { width: NW, height: NH, rx: 6 }),
        s("text", { class: "name", x: 8, y: 17 }, label.length > 20 ? label.slice(0, 19) + "…" : label),
        s("text", { x: 8, y: 34 }, m ? `in ${fmtRate(m.inRate)} · out ${fmtRate(m.outRate)}` : "not running"),
        s("text", { x: 8, y: 49 }, m ? `${m.out} out · ${m.errors} err${m.buffer ? ` · buf ${m.buffer}` : ""}` : ""),
      ),
    );
  }
  return s(
    "svg",
    { class: "topo-svg", width, height, viewBox: `0 0 ${width} ${height}`, role: "img", "aria-label": "rule topology" },
    s("defs", {}, s("marker", { id: "arrow", viewBox: "0 0 10 10", refX: 9, refY: 5, markerWidth: 7, markerHeight: 7, orient: "auto" }, s("path", { d: "M0,0 L10,5 L0,10 z" }))),
    edges,
    boxes,
  );
}
