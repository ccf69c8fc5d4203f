/** SVG drawn by hand: rate charts of the last ten minutes (axes, units, range) and a rule's topology. */
import { fmtRate, h, s } from "./dom.ts";
import type { NodeSample, Topo, TotalsPoint } from "./types.ts";

const W = 480;
const H = 170;
const ML = 56;
const MR = 10;
const MT = 22;
const MB = 24;
const WINDOW_MS = 10 * 60_000;

/** A round step for about four ticks up to `max` (1, 2 or 5 times a power of ten). */
function niceStep(max: number): number {
  const raw = Math.max(max, 1) / 4;
  const p = 10 ** Math.floor(Math.log10(raw));
  return [1, 2, 5, 10].map((m) => m * p).find((v) => v >= raw)!;
}

const clock = (t: number) => new Date(t).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit", second: "2-digit", hour12: false });

/**
 * A rate chart of `key` over the ten minutes up to the latest point (one point a second): a
 * y axis in records per second with round ticks, an x axis of clock times, the range in the caption.
 */
export function rateChart(points: TotalsPoint[], key: "in" | "out" | "drop", label: string): HTMLElement {
  const vals = points.map((p) => p[key]);
  const max = Math.max(0, ...vals);
  const step = niceStep(max);
  const top = Math.max(step, Math.ceil(max / step) * step);
  const end = points.length ? points[points.length - 1]!.t : Date.now();
  const start = end - WINDOW_MS;
  const pw = W - ML - MR;
  const ph = H - MT - MB;
  const x = (t: number) => ML + ((t - start) / WINDOW_MS) * pw;
  const y = (v: number) => MT + ph - (v / top) * ph;
  const xy = points.filter((p) => p.t >= start).map((p) => `${x(p.t).toFixed(1)},${y(p[key]).toFixed(1)}`);
  const last = vals.length ? vals[vals.length - 1]! : 0;
  const color = `var(--${key})`;
  const yTicks: SVGElement[] = [];
  for (let v = 0; v <= top + step / 2; v += step)
    yTicks.push(s("line", { class: "grid", x1: ML, x2: W - MR, y1: y(v), y2: y(v) }), s("text", { class: "tick", x: ML - 6, y: y(v) + 4, "text-anchor": "end" }, fmtRate(v)));
  const xTicks: SVGElement[] = [];
  for (let i = 0; i <= 4; i++) {
    const t = start + (i * WINDOW_MS) / 4;
    xTicks.push(s("line", { class: "axis", x1: x(t), x2: x(t), y1: MT + ph, y2: MT + ph + 4 }), s("text", { class: "tick", x: x(t), y: H - 6, "text-anchor": i === 0 ? "start" : i === 4 ? "end" : "middle" }, clock(t)));
  }
  const first = xy.length ? xy[0]!.split(",")[0] : String(ML);
  const lastX = xy.length ? xy[xy.length - 1]!.split(",")[0] : String(ML);
  return h(
    "div",
    { class: "card chart", "data-spark": key },
    h("div", { class: "k" }, h("b", {}, label), ` — now ${fmtRate(last)}, max ${fmtRate(max)}`),
    s(
      "svg",
      { viewBox: `0 0 ${W} ${H}`, width: W, height: H, role: "img", "aria-label": `${label} in records per second, ${clock(start)} to ${clock(end)}` },
      yTicks,
      s("line", { class: "axis", x1: ML, x2: ML, y1: MT, y2: MT + ph }),
      s("line", { class: "axis", x1: ML, x2: W - MR, y1: MT + ph, y2: MT + ph }),
      xTicks,
      xy.length > 1 ? s("polyline", { points: `${first},${MT + ph} ${xy.join(" ")} ${lastX},${MT + ph}`, fill: color, "fill-opacity": "0.12", stroke: "none" }) : null,
      xy.length > 1 ? s("polyline", { points: xy.join(" "), fill: "none", stroke: color, "stroke-width": "1.5" }) : null,
      s("text", { class: "unit", x: 4, y: 12 }, "records/s"),
    ),
    h("div", { class: "range muted", "data-k": "range" }, `${clock(start)} – ${clock(end)} (last 10 minutes)`),
  );
}

const NW = 156;
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
        s("text", { class: "name", x: 8, y: 17 }, label.length > 19 ? label.slice(0, 18) + "…" : label),
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
