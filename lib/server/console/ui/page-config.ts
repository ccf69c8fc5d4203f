/** Connections and the confKeys of each source and sink type (secrets masked by the server). */
import { call } from "./api.ts";
import { fill, h } from "./dom.ts";

export function configPage(main: HTMLElement): void {
  const conns = h("div", { id: "connections" }, "…");
  const keys = h("pre", { id: "confkeys" });
  const kind = h("select", {}, h("option", { value: "sources" }, "sources"), h("option", { value: "sinks" }, "sinks")) as HTMLSelectElement;
  const type = h("select", { id: "conf-type" }) as HTMLSelectElement;
  const show = async () => {
    try {
      fill(keys, JSON.stringify(await call("GET", `/metadata/${kind.value}/yaml/${encodeURIComponent(type.value)}`), null, 2));
    } catch (e) {
      fill(keys, h("span", { class: "err" }, (e as Error).message));
    }
  };
  const types = async () => {
    const list = (await call("GET", `/metadata/${kind.value}`).catch(() => [])) as { name: string }[];
    fill(type, list.map((t) => h("option", { value: t.name }, t.name)));
    void show();
  };
  kind.addEventListener("change", () => void types());
  type.addEventListener("change", () => void show());
  fill(main, h("h1", {}, "Connections & confKeys"), h("h2", {}, "Connections"), conns, h("h2", {}, "confKeys"), h("div", { class: "row" }, kind, type), keys);
  call("GET", "/connections").then(
    (c) => {
      const list = (c ?? []) as unknown[];
      fill(conns, list.length ? h("pre", {}, JSON.stringify(list, null, 2)) : h("div", { class: "muted" }, "No connections."));
    },
    (e: Error) => fill(conns, h("span", { class: "err" }, e.message)),
  );
  void types();
}
