/** The console's shell: hash routes to pages, one live stream, the token prompt when JWT is on. */
import { setToken, setUnauthorizedHandler } from "./api.ts";
import { fill, h } from "./dom.ts";
import { connect, disconnect, live } from "./live.ts";
import { configPage } from "./page-config.ts";
import { overviewPage } from "./page-overview.ts";
import { leavePeek } from "./peek.ts";
import { rulePage } from "./page-rule.ts";
import { rulesPage } from "./page-rules.ts";
import { streamsPage } from "./page-streams.ts";
import { leaveTrial, trialPage } from "./page-trial.ts";
import css from "./style.css" with { type: "text" };

document.head.append(h("style", {}, css));

const main = document.getElementById("main")!;
const dot = document.getElementById("live")!;
const setLive = (on: boolean) => dot.classList.toggle("on", on);
let asking = false;

function askToken(message: string): void {
  if (asking) return;
  asking = true;
  const input = h("textarea", { id: "token", placeholder: "eyJhbGciOi…" }) as HTMLTextAreaElement;
  fill(
    main,
    h("h1", {}, "Sign in"),
    h("p", {}, "This engine requires a JSON Web Token (", h("code", {}, "basic.authentication"), "). Paste one signed by a key in ", h("code", {}, "etc/mgmt"), "."),
    message ? h("p", { class: "err" }, message) : null,
    input,
    h(
      "div",
      { class: "row" },
      h("button", {
        class: "primary",
        id: "token-save",
        onclick: () => {
          setToken(input.value.trim());
          asking = false;
          route(true);
        },
      }, "Sign in"),
    ),
  );
}

function route(reconnect = false): void {
  if (asking) return;
  const path = location.hash.replace(/^#/, "") || "/";
  for (const a of document.querySelectorAll("nav a")) a.classList.toggle("on", a.getAttribute("href") === "#" + (path.startsWith("/rules") ? "/rules" : path));
  live.listener = undefined;
  leaveTrial();
  leavePeek();
  const m = /^\/rules\/(.+)$/.exec(path);
  const rule = m ? decodeURIComponent(m[1]!) : "";
  if (reconnect) disconnect();
  connect(rule, setLive);
  if (m) rulePage(main, rule);
  else if (path === "/rules") rulesPage(main);
  else if (path === "/streams") streamsPage(main);
  else if (path === "/trial") trialPage(main);
  else if (path === "/config") configPage(main);
  else overviewPage(main);
}

setUnauthorizedHandler(askToken);
window.addEventListener("hashchange", () => route());
route();
