/**
 * Trial run through the ruletest API: a SELECT (in the SQL editor), optional mock rows per stream
 * or the live source, and the rows it emits shown as they arrive from the trial's SSE endpoint on
 * the data server (the last SHOWN of them; the count covers all).
 */
import { call, readEvents } from "./api.ts";
import { fill, h } from "./dom.ts";
import { loadNames, sqlEditor } from "./editor.ts";

const SHOWN = 200;

let running: { id: string; ctl: AbortController } | undefined;

async function stopTrial(): Promise<void> {
  const r = running;
  running = undefined;
  if (!r) return;
  r.ctl.abort();
  await call("DELETE", `/ruletest/${encodeURIComponent(r.id)}`).catch(() => {});
}

export function trialPage(main: HTMLElement): void {
  const sql = sqlEditor({ id: "trial-sql", kind: "rule", names: loadNames(), placeholder: "SELECT * FROM demo" });
  const mock = h("textarea", { id: "trial-mock", placeholder: '{"demo": {"data": [{"temperature": 21}], "interval": 100, "loop": false}}' }) as HTMLTextAreaElement;
  const msg = h("div", { id: "trial-msg" });
  const out = h("pre", { id: "trial-out" });
  let rows = 0;
  const start = async () => {
    await stopTrial();
    fill(out);
    rows = 0;
    const id = `console_${Date.now().toString(36)}`;
    try {
      const body: Record<string, unknown> = { id, sql: sql.input.value };
      if (mock.value.trim()) {
        try {
          body.mockSource = JSON.parse(mock.value);
        } catch (e) {
          throw new Error(`mock source: ${(e as Error).message}`);
        }
      }
      const r = (await call("POST", "/ruletest", body)) as { port: number };
      const ctl = new AbortController();
      running = { id, ctl };
      const url = `${location.protocol}//${location.hostname}:${r.port}/test/${encodeURIComponent(id)}`;
      const reading = readEvents(url, ctl.signal, (_ev, data) => {
        rows++;
        out.append(data + "\n");
        if (out.childNodes.length > SHOWN) out.firstChild!.remove();
        fill(msg, h("span", { class: "ok" }, `${rows} result${rows === 1 ? "" : "s"}`));
      }, false).catch(() => {});
      await call("POST", `/ruletest/${encodeURIComponent(id)}/start`);
      fill(msg, h("span", { class: "ok" }, "running…"));
      await reading;
    } catch (e) {
      fill(msg, h("span", { class: "err" }, (e as Error).message));
    }
  };
  fill(
    main,
    h("h1", {}, "Trial run"),
    h("div", { class: "field" }, h("span", { class: "muted" }, "SQL"), sql.el),
    h("label", {}, "Mock source (JSON, by stream name; empty to read the real connector)", mock),
    h("div", { class: "row" }, h("button", { class: "primary", id: "trial-start", onclick: () => void start() }, "Run"), h("button", { id: "trial-stop", onclick: () => void stopTrial().then(() => fill(msg, "stopped")) }, "Stop")),
    msg,
    out,
  );
}

/** Leaving the page ends its trial. */
export function leaveTrial(): void {
  void stopTrial();
}
