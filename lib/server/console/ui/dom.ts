/** A small element builder: `h("td", { class: "n" }, "12")`. Strings become text nodes (never HTML). */
type Child = Node | string | number | null | undefined | false;
type Attrs = Record<string, string | number | boolean | ((e: Event) => void) | undefined>;

export function h(tag: string, attrs: Attrs = {}, ...children: (Child | Child[])[]): HTMLElement {
  const el = document.createElement(tag);
  setAttrs(el, attrs);
  append(el, children);
  return el;
}

const SVG = "http://www.w3.org/2000/svg";

export function s(tag: string, attrs: Attrs = {}, ...children: (Child | Child[])[]): SVGElement {
  const el = document.createElementNS(SVG, tag);
  setAttrs(el, attrs);
  append(el, children);
  return el;
}

function setAttrs(el: Element, attrs: Attrs): void {
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === false) continue;
    if (typeof v === "function") el.addEventListener(k.replace(/^on/, ""), v);
    else el.setAttribute(k, v === true ? "" : String(v));
  }
}

function append(el: Element, children: (Child | Child[])[]): void {
  for (const c of children.flat()) {
    if (c === null || c === undefined || c === false) continue;
    el.append(typeof c === "object" ? c : String(c));
  }
}

/** Replaces the children of `el`. */
export function fill(el: Element, ...children: (Child | Child[])[]): void {
  el.replaceChildren();
  append(el, children);
}

export function fmtRate(v: number): string {
  if (v >= 1e6) return `${(v / 1e6).toFixed(2)} M/s`;
  if (v >= 1e3) return `${(v / 1e3).toFixed(1)} k/s`;
  return `${v >= 10 || v === 0 ? v.toFixed(0) : v.toFixed(1)} /s`;
}

export function fmtBytes(v: number): string {
  if (v >= 1 << 30) return `${(v / (1 << 30)).toFixed(2)} GiB`;
  if (v >= 1 << 20) return `${(v / (1 << 20)).toFixed(1)} MiB`;
  return `${(v / 1024).toFixed(0)} KiB`;
}

export function fmtDuration(sec: number): string {
  const d = Math.floor(sec / 86400);
  const hh = Math.floor((sec % 86400) / 3600);
  const m = Math.floor((sec % 3600) / 60);
  return d ? `${d}d ${hh}h ${m}m` : hh ? `${hh}h ${m}m` : `${m}m ${sec % 60}s`;
}

export function fmtTime(ms: number): string {
  return ms > 0 ? new Date(ms).toLocaleString() : "";
}
