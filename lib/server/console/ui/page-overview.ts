/** Overview: the engine's figures, rules by state, total rates (In once per source) and their charts. */
import { fill, fmtBytes, fmtDuration, fmtRate, h } from "./dom.ts";
import { rateChart } from "./charts.ts";
import { live } from "./live.ts";
import type { Sample } from "./types.ts";

function card(k: string, v: string, id: string): HTMLElement {
  return h("div", { class: "card" }, h("div", { class: "k" }, k), h("div", { class: "v", "data-k": id }, v));
}

export function overviewPage(main: HTMLElement): void {
  const cards = h("div", { class: "cards" });
  const states = h("div", { class: "cards" });
  const sparks = h("div", { class: "spark" });
  fill(main, h("h1", {}, "Overview"), cards, h("h2", {}, "Rules by state"), states, h("h2", {}, "Throughput, last 10 minutes"), sparks);
  const draw = (smp: Sample) => {
    const y = smp.system;
    fill(
      cards,
      card("Version", y.version, "version"),
      card("Uptime", fmtDuration(y.upTimeSeconds), "uptime"),
      card("CPU", `${y.cpu.toFixed(1)} %`, "cpu"),
      card("Memory (RSS)", fmtBytes(y.rss), "rss"),
      card("Event-loop lag (max, last min)", `${y.lagMs.toFixed(1)} ms`, "lag"),
      card(`In (${smp.sources} source${smp.sources === 1 ? "" : "s"}, each once)`, fmtRate(smp.totals.in), "in"),
      card("Out (all sinks)", fmtRate(smp.totals.out), "out"),
      card("Errors / drops", fmtRate(smp.totals.drop), "drop"),
      y.safeMode ? card("Safe mode", "on", "safe") : null,
    );
    const st = Object.entries(smp.states);
    fill(states, st.length ? st.map(([k, v]) => card(k, String(v), `state-${k}`)) : h("div", { class: "muted" }, "No rules yet."));
    fill(sparks, rateChart(live.history, "in", "In"), rateChart(live.history, "out", "Out"), rateChart(live.history, "drop", "Errors / drops"));
  };
  if (live.last) draw(live.last);
  live.listener = draw;
}
