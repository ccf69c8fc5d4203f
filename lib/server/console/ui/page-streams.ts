/**
 * Streams and tables: their definitions, a CREATE statement written in the SQL editor (checked as
 * you type) and run as the CLI runs it (same errors), and "edit" to replace one with `PUT`.
 */
import { call } from "./api.ts";
import { fill, h } from "./dom.ts";
import { loadNames, sqlEditor, type CatalogEntry } from "./editor.ts";

export function streamsPage(main: HTMLElement): void {
  const msg = h("div", { id: "streams-msg" });
  const lists = h("div", { class: "grid2" });
  const names = loadNames();
  const sql = sqlEditor({ id: "create-sql", kind: "stream", names, placeholder: 'CREATE STREAM demo (temperature FLOAT) WITH (TYPE="memory", DATASOURCE="demo", FORMAT="json")' });
  const title = h("h2", { id: "create-title" }, "Create");
  const cancel = h("button", { id: "create-cancel", hidden: true, onclick: () => setMode(undefined) }, "Cancel");
  const run = h("button", { class: "primary", id: "create-run", onclick: () => void create() }, "Create");
  /** The definition being replaced, or undefined when creating. */
  let editing: CatalogEntry | undefined;
  const setMode = (entry: CatalogEntry | undefined) => {
    editing = entry;
    fill(title, entry ? `Edit ${entry.kind} ${entry.name}` : "Create");
    fill(run, entry ? "Replace" : "Create");
    cancel.hidden = !entry;
    sql.input.value = entry ? entry.statement : "";
    sql.input.dispatchEvent(new Event("input"));
    if (entry) sql.input.focus();
  };
  const create = async () => {
    const table = /^\s*create\s+table\b/i.test(sql.input.value);
    try {
      const r = editing
        ? await call("PUT", `/${editing.kind}s/${encodeURIComponent(editing.name)}`, { sql: sql.input.value })
        : await call("POST", table ? "/tables" : "/streams", { sql: sql.input.value });
      fill(msg, h("span", { class: "ok" }, String(r ?? "")));
      if (editing) setMode(undefined);
      void load();
    } catch (e) {
      fill(msg, h("span", { class: "err" }, (e as Error).message));
    }
  };
  const load = async () => {
    let catalog: CatalogEntry[];
    try {
      catalog = (await call("GET", "/ui/api/catalog")) as CatalogEntry[];
    } catch (e) {
      fill(lists, h("span", { class: "err" }, (e as Error).message));
      return;
    }
    const part = (kind: "stream" | "table") => {
      const mine = catalog.filter((c) => c.kind === kind).sort((a, b) => (a.name < b.name ? -1 : 1));
      return h(
        "div",
        { id: `${kind}s` },
        h("h2", {}, kind === "stream" ? "Streams" : "Tables"),
        mine.length
          ? mine.map((c) =>
              h(
                "details",
                { "data-name": c.name },
                h("summary", {}, h("code", {}, c.name), " ", h("span", { class: "muted" }, c.fields ? c.fields.join(", ") : "schemaless"), " ", h("button", { "data-action": "edit", onclick: () => setMode(c) }, "edit"), " ", h("button", { "data-action": "delete", onclick: () => void drop(kind, c.name) }, "delete")),
                h("pre", {}, c.statement),
              ),
            )
          : h("div", { class: "muted" }, `No ${kind}s.`),
      );
    };
    fill(lists, part("stream"), part("table"));
  };
  const drop = async (kind: string, n: string) => {
    try {
      fill(msg, h("span", { class: "ok" }, String((await call("DELETE", `/${kind}s/${encodeURIComponent(n)}`)) ?? "")));
    } catch (e) {
      fill(msg, h("span", { class: "err" }, (e as Error).message));
    }
    void load();
  };
  fill(main, h("h1", {}, "Streams & tables"), title, sql.el, h("div", { class: "row" }, run, cancel), msg, lists);
  void load();
}
