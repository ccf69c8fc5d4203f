/**
 * The SQL editor: a textarea over a highlighted copy of its text (keywords, strings, numbers,
 * comments, function calls, and the error's token underlined), completion of stream, field and
 * function names, and the server's verdict (`/ui/api/validate`: eKuiper's message, the caret lines
 * and "did you mean" of the CLI) shown under it as the user types.
 */
import { call } from "./api.ts";
import { fill, h } from "./dom.ts";

export interface Verdict {
  valid: boolean;
  message?: string;
  line?: number;
  column?: number;
  length?: number;
  suggestion?: { name: string; what: string };
  detail?: string;
}

export interface CatalogEntry {
  name: string;
  kind: "stream" | "table";
  statement: string;
  fields: string[] | null;
}

const KEYWORDS = ["SELECT", "FROM", "WHERE", "GROUP", "BY", "HAVING", "ORDER", "LIMIT", "AS", "AND", "OR", "NOT", "INNER", "LEFT", "RIGHT", "FULL", "CROSS", "JOIN", "ON", "CASE", "WHEN", "THEN", "ELSE", "END", "IN", "BETWEEN", "LIKE", "IS", "NULL", "ASC", "DESC", "TRUE", "FALSE", "FILTER", "OVER", "PARTITION", "CREATE", "STREAM", "TABLE", "WITH", "TYPE", "DATASOURCE", "FORMAT", "CONF_KEY", "SHARED", "KEY", "TIMESTAMP", "BIGINT", "FLOAT", "STRING", "BOOLEAN", "DATETIME", "BYTEA", "ARRAY", "STRUCT", "TUMBLINGWINDOW", "HOPPINGWINDOW", "SLIDINGWINDOW", "SESSIONWINDOW", "COUNTWINDOW"];
const KW = new Set(KEYWORDS);
const TOKEN = /(--[^\n]*|\/\*[\s\S]*?(?:\*\/|$))|("(?:[^"\\]|\\.)*"?|'(?:[^'\\]|\\.)*'?)|(\b\d+(?:\.\d+)?\b)|(`[^`]*`?|[A-Za-z_]\w*)/g;

/** Names to complete from: the catalog's streams and fields, `/metadata/functions`; loaded once per page. */
export interface Names {
  catalog: CatalogEntry[];
  functions: string[];
}

export async function loadNames(): Promise<Names> {
  const [catalog, groups] = await Promise.all([
    call("GET", "/ui/api/catalog").catch(() => []) as Promise<CatalogEntry[]>,
    call("GET", "/metadata/functions").catch(() => []) as Promise<{ functions: { name: string }[] }[]>,
  ]);
  return { catalog, functions: groups.flatMap((g) => g.functions.map((f) => f.name)) };
}

/** Offset of 1-based (line, column) in `text`. */
function offsetOf(text: string, line: number, column: number): number {
  let at = 0;
  for (let l = 1; l < line; l++) {
    const nl = text.indexOf("\n", at);
    if (nl < 0) return text.length;
    at = nl + 1;
  }
  return Math.min(text.length, at + column - 1);
}

/** The highlighted copy: spans by token class; `bad` marks [from, to) of the error. */
function highlight(text: string, bad: [number, number] | undefined): Node[] {
  const out: Node[] = [];
  let last = 0;
  const push = (from: number, to: number, cls: string) => {
    if (to <= from) return;
    // Split at the error's edges so the underline covers exactly its characters.
    const cuts = [from, to];
    if (bad) for (const c of bad) if (c > from && c < to) cuts.splice(cuts.length - 1, 0, c);
    for (let i = 0; i + 1 < cuts.length; i++) {
      const a = cuts[i]!;
      const b = cuts[i + 1]!;
      const isBad = bad !== undefined && a >= bad[0] && b <= bad[1];
      const c = [cls, isBad ? "bad" : ""].filter(Boolean).join(" ");
      out.push(c ? h("span", { class: c }, text.slice(a, b)) : document.createTextNode(text.slice(a, b)));
    }
  };
  for (const m of text.matchAll(TOKEN)) {
    const at = m.index;
    push(last, at, "");
    const word = m[4];
    const cls = m[1] ? "t-com" : m[2] ? "t-str" : m[3] ? "t-num" : word && KW.has(word.toUpperCase()) ? "t-kw" : word && text[at + word.length] === "(" ? "t-fn" : "";
    push(at, at + m[0].length, cls);
    last = at + m[0].length;
  }
  push(last, text.length, "");
  // An error at the very end (EOF): a visible mark after the text.
  if (bad && bad[0] >= text.length) out.push(h("span", { class: "bad eof" }, " "));
  // A trailing newline needs a character after it for the copy to be as tall as the textarea.
  out.push(document.createTextNode("\n"));
  return out;
}

/** Candidates for the word being typed: streams after FROM/JOIN, else fields, functions and keywords. */
function candidates(names: Names, text: string, at: number): { prefix: string; list: string[] } {
  const before = text.slice(0, at);
  const prefix = /[A-Za-z_]\w*$/.exec(before)?.[0] ?? "";
  if (!prefix) return { prefix, list: [] };
  const p = prefix.toLowerCase();
  const afterFrom = /\b(?:FROM|JOIN)\s+[A-Za-z_]\w*$/i.test(before);
  const streams = names.catalog.map((c) => c.name);
  let pool: string[];
  if (afterFrom) pool = streams;
  else {
    // Fields of the streams the text names first, then every other's.
    const named = names.catalog.filter((c) => new RegExp(`\\b${c.name}\\b`).test(text));
    const fields = [...named, ...names.catalog.filter((c) => !named.includes(c))].flatMap((c) => c.fields ?? []);
    pool = [...fields, ...streams, ...names.functions, ...KEYWORDS];
  }
  const seen = new Set<string>();
  const list: string[] = [];
  for (const c of pool) {
    if (list.length >= 8) break;
    if (seen.has(c) || c.toLowerCase() === p || !c.toLowerCase().startsWith(p)) continue;
    seen.add(c);
    list.push(c);
  }
  return { prefix, list };
}

export interface Editor {
  readonly el: HTMLElement;
  readonly input: HTMLTextAreaElement;
  /** The last verdict (undefined before the first answer). */
  verdict(): Verdict | undefined;
  /** Asks the server now (not after the typing pause). */
  check(): Promise<Verdict | undefined>;
}

/** An editor for a rule's SELECT (`kind` "rule") or a CREATE statement ("stream"). */
export function sqlEditor(opts: { id: string; kind: "rule" | "stream"; names: Promise<Names>; value?: string; placeholder?: string }): Editor {
  const input = h("textarea", { id: opts.id, spellcheck: "false", autocomplete: "off", placeholder: opts.placeholder ?? "" }) as HTMLTextAreaElement;
  input.value = opts.value ?? "";
  const copy = h("pre", { class: "hl", "aria-hidden": "true" });
  const diag = h("div", { class: "diag", id: `${opts.id}-diag`, "aria-live": "polite" });
  const menu = h("div", { class: "complete", id: `${opts.id}-complete`, role: "listbox" });
  let names: Names = { catalog: [], functions: [] };
  void opts.names.then((n) => (names = n));
  let verdict: Verdict | undefined;
  let bad: [number, number] | undefined;
  let seq = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let choices: string[] = [];
  let chosen = 0;

  const paint = () => {
    fill(copy, highlight(input.value, bad));
    copy.scrollTop = input.scrollTop;
    copy.scrollLeft = input.scrollLeft;
  };
  const show = (v: Verdict) => {
    verdict = v;
    bad = !v.valid && v.line !== undefined && v.column !== undefined ? ((o) => [o, o + (v.length ?? 1)] as [number, number])(offsetOf(input.value, v.line, v.column)) : undefined;
    paint();
    if (v.valid) fill(diag, h("span", { class: "ok" }, "✓ valid"));
    else
      fill(
        diag,
        h("div", { class: "err", "data-k": "message" }, v.message ?? ""),
        v.line !== undefined ? h("div", { class: "muted", "data-k": "where" }, `line ${v.line}, column ${v.column}`) : null,
        v.detail ? h("pre", { class: "caret", "data-k": "caret" }, v.detail) : null,
        v.suggestion ? h("button", { class: "fix", "data-k": "fix", onclick: () => applyFix(v) }, `use ${v.suggestion.name}`) : null,
      );
  };
  const check = async (): Promise<Verdict | undefined> => {
    clearTimeout(timer);
    const mine = ++seq;
    const text = input.value;
    if (!text.trim()) {
      bad = undefined;
      verdict = undefined;
      fill(diag);
      paint();
      return undefined;
    }
    try {
      const v = (await call("POST", "/ui/api/validate", { sql: text, kind: opts.kind })) as Verdict;
      if (mine === seq) show(v);
      return v;
    } catch (e) {
      if (mine === seq) fill(diag, h("span", { class: "err" }, (e as Error).message));
      return undefined;
    }
  };
  /** Replaces the token under the error with the suggested name. */
  const applyFix = (v: Verdict) => {
    if (!bad || !v.suggestion) return;
    input.value = input.value.slice(0, bad[0]) + v.suggestion.name + input.value.slice(bad[1]);
    bad = undefined;
    paint();
    void check();
  };
  const closeMenu = () => {
    choices = [];
    fill(menu);
  };
  const drawMenu = () => {
    fill(menu, choices.map((c, i) => h("button", { class: i === chosen ? "on" : "", "data-choice": c, role: "option", onmousedown: (e: Event) => (e.preventDefault(), accept(c)) }, c)));
  };
  const accept = (word: string) => {
    const at = input.selectionStart;
    const { prefix } = candidates(names, input.value, at);
    input.value = input.value.slice(0, at - prefix.length) + word + input.value.slice(at);
    const caret = at - prefix.length + word.length;
    input.setSelectionRange(caret, caret);
    closeMenu();
    onInput();
  };
  const onInput = () => {
    bad = undefined;
    paint();
    const c = candidates(names, input.value, input.selectionStart);
    choices = c.list;
    chosen = 0;
    drawMenu();
    clearTimeout(timer);
    timer = setTimeout(() => void check(), 250);
  };
  input.addEventListener("input", onInput);
  input.addEventListener("scroll", paint);
  input.addEventListener("blur", closeMenu);
  input.addEventListener("keydown", (e) => {
    if (!choices.length) return;
    if (e.key === "ArrowDown" || e.key === "ArrowUp") {
      chosen = (chosen + (e.key === "ArrowDown" ? 1 : choices.length - 1)) % choices.length;
      drawMenu();
    } else if (e.key === "Tab" || e.key === "Enter") accept(choices[chosen]!);
    else if (e.key === "Escape") closeMenu();
    else return;
    e.preventDefault();
  });
  paint();
  if (input.value) void check();
  return { el: h("div", { class: "editor-wrap" }, h("div", { class: "editor" }, copy, input), menu, diag), input, verdict: () => verdict, check };
}
