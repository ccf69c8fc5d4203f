/** Streams and tables: their definitions, and CREATE statements run as the CLI runs them (same errors). */
import { call } from "./api.ts";
import { fill, h } from "./dom.ts";

export function streamsPage(main: HTMLElement): void {
  const msg = h("div", { id: "streams-msg" });
  const lists = h("div", { class: "grid2" });
  const sql = h("textarea", { id: "create-sql", placeholder: 'CREATE STREAM demo (temperature FLOAT) WITH (TYPE="memory", DATASOURCE="demo", FORMAT="json")' }) as HTMLTextAreaElement;
  const create = async () => {
    const table = /^\s*create\s+table\b/i.test(sql.value);
    try {
      const r = await call("POST", table ? "/tables" : "/streams", { sql: sql.value });
      fill(msg, h("span", { class: "ok" }, String(r ?? "")));
      void load();
    } catch (e) {
      fill(msg, h("span", { class: "err" }, (e as Error).message));
    }
  };
  const load = async () => {
    const part = async (kind: "stream" | "table") => {
      const names = (await call("GET", `/${kind}s`)) as string[];
      const defs = await Promise.all(names.map((n) => call("GET", `/${kind}s/${encodeURIComponent(n)}`).catch((e: Error) => ({ error: e.message }))));
      return h(
        "div",
        { id: `${kind}s` },
        h("h2", {}, kind === "stream" ? "Streams" : "Tables"),
        names.length
          ? names.map((n, i) =>
              h(
                "details",
                { "data-name": n },
                h("summary", {}, n, " ", h("button", { onclick: () => void drop(kind, n) }, "delete")),
                h("pre", {}, JSON.stringify(defs[i], null, 2)),
              ),
            )
          : h("div", { class: "muted" }, `No ${kind}s.`),
      );
    };
    try {
      fill(lists, await part("stream"), await part("table"));
    } catch (e) {
      fill(lists, h("span", { class: "err" }, (e as Error).message));
    }
  };
  const drop = async (kind: string, n: string) => {
    try {
      fill(msg, h("span", { class: "ok" }, String((await call("DELETE", `/${kind}s/${encodeURIComponent(n)}`)) ?? "")));
    } catch (e) {
      fill(msg, h("span", { class: "err" }, (e as Error).message));
    }
    void load();
  };
  fill(main, h("h1", {}, "Streams & tables"), h("h2", {}, "Create"), sql, h("div", { class: "row" }, h("button", { class: "primary", id: "create-run", onclick: () => void create() }, "Create")), msg, lists);
  void load();
}
