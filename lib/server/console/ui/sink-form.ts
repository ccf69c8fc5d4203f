/**
 * A form for one action, built from the sinks' metadata (`/metadata/sinks`, `/metadata/sinks/{type}`,
 * as eKuiper Manager reads them): pick a type, fill its properties (defaults shown), and "Add
 * action" appends `{"<type>": {…}}` to the actions JSON, which stays the definition (only the
 * properties that differ from their defaults are written).
 */
import { call } from "./api.ts";
import { fill, h } from "./dom.ts";

interface SinkProperty {
  name: string;
  default: unknown;
  type: string;
}

type Read = () => unknown;

function input(p: SinkProperty): { el: HTMLElement; read: Read } {
  const id = `sink-prop-${p.name}`;
  if (p.type === "bool") {
    const el = h("input", { type: "checkbox", id }) as HTMLInputElement;
    el.checked = p.default === true;
    return { el, read: () => el.checked };
  }
  if (p.type === "int") {
    const el = h("input", { type: "number", id }) as HTMLInputElement;
    el.value = String(p.default ?? 0);
    return { el, read: () => Number(el.value) };
  }
  if (p.type === "object" || p.type === "list_object") {
    const el = h("textarea", { id, class: "small" }) as HTMLTextAreaElement;
    el.value = JSON.stringify(p.default ?? {});
    return { el, read: () => JSON.parse(el.value) as unknown };
  }
  const el = h("input", { id, type: /password|secret|token/i.test(p.name) ? "password" : "text", autocomplete: "off" }) as HTMLInputElement;
  el.value = String(p.default ?? "");
  return { el, read: () => el.value };
}

export function sinkForm(actions: HTMLTextAreaElement, msg: HTMLElement): HTMLElement {
  const type = h("select", { id: "sink-type" }, h("option", { value: "" }, "add an action…")) as HTMLSelectElement;
  const props = h("div", { id: "sink-props" });
  let fields: { p: SinkProperty; el: HTMLElement; read: Read }[] = [];
  const add = () => {
    try {
      const conf: Record<string, unknown> = {};
      for (const { p, read } of fields) {
        const v = read();
        if (JSON.stringify(v) !== JSON.stringify(p.default)) conf[p.name] = v;
      }
      const list = JSON.parse(actions.value.trim() || "[]") as unknown;
      if (!Array.isArray(list)) throw new Error("the actions are not a JSON array");
      list.push({ [type.value]: conf });
      actions.value = JSON.stringify(list, null, 2);
    } catch (e) {
      fill(msg, h("span", { class: "err" }, `actions: ${(e as Error).message}`));
    }
  };
  type.addEventListener("change", async () => {
    fields = [];
    if (!type.value) return fill(props);
    const meta = (await call("GET", `/metadata/sinks/${encodeURIComponent(type.value)}`).catch(() => ({ properties: [] }))) as { properties: SinkProperty[] };
    fields = meta.properties.map((p) => ({ p, ...input(p) }));
    fill(
      props,
      h("div", { class: "props" }, fields.map((f) => h("label", { class: "prop" }, f.p.type === "bool" ? [f.el, ` ${f.p.name}`] : [f.p.name, f.el]))),
      h("div", { class: "row" }, h("button", { id: "sink-add", onclick: add }, `Add ${type.value} action`)),
    );
  });
  void call("GET", "/metadata/sinks").then((list) => {
    for (const s of (list ?? []) as { name: string }[]) type.append(h("option", { value: s.name }, s.name));
  });
  return h("div", { class: "sink-form" }, type, props);
}
