/**
 * Connections with their live status and the rules using each (named ones and the clients of
 * streams and actions, `/ui/api/connections`, refreshed with every sample), and the confKeys of
 * each source and sink type (secrets masked by the server).
 */
import { call } from "./api.ts";
import { fill, fmtTime, h } from "./dom.ts";
import { live } from "./live.ts";

interface ConnectionView {
  name: string;
  typ: string;
  target: string;
  status: string;
  err: string;
  lastConnected: number;
  lastDisconnected: number;
  rules: string[];
}

function connectionsTable(list: ConnectionView[]): HTMLElement {
  if (!list.length) return h("div", { class: "muted" }, "No connections.");
  return h(
    "table",
    { id: "connections-table" },
    h("thead", {}, h("tr", {}, h("th", {}, "Connection"), h("th", {}, "Type"), h("th", {}, "Target"), h("th", {}, "Status"), h("th", {}, "Last connected"), h("th", {}, "Last disconnected"), h("th", {}, "Rules"))),
    h(
      "tbody",
      {},
      list.map((c) =>
        h(
          "tr",
          { "data-conn": c.name },
          h("td", {}, c.name),
          h("td", {}, c.typ),
          h("td", {}, h("code", {}, c.target)),
          h("td", {}, h("span", { class: `state conn-${c.status}`, "data-k": "status", title: c.err }, c.status), c.err ? h("div", { class: "err" }, c.err) : null),
          h("td", { class: "time" }, fmtTime(c.lastConnected)),
          h("td", { class: "time" }, fmtTime(c.lastDisconnected)),
          h("td", { "data-k": "rules" }, c.rules.flatMap((r, i) => [i ? ", " : "", h("a", { href: `#/rules/${encodeURIComponent(r)}` }, r)])),
        ),
      ),
    ),
  );
}

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
  let busy = false;
  const refresh = () => {
    if (busy) return;
    busy = true;
    call("GET", "/ui/api/connections")
      .then(
        (c) => fill(conns, connectionsTable((c ?? []) as ConnectionView[])),
        (e: Error) => fill(conns, h("span", { class: "err" }, e.message)),
      )
      .finally(() => (busy = false));
  };
  refresh();
  live.listener = refresh;
  void types();
}
