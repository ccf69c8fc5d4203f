/** Rule verbs (config-and-cli.md §8.3): create, describe, show, getstatus, gettopo, start, stop, restart, drop, validate. */
import { existsSync, readFileSync } from "node:fs";
import { idError } from "../../store/ids.ts";
import { errorMessage, indentJson, ok, type Client } from "./client.ts";

/** Splits urfave/cli v1 args: flags first (`-f file`), then positionals. */
function flagsThenArgs(args: string[], withValue: string[]): { flags: Record<string, string>; rest: string[] } {
  const flags: Record<string, string> = {};
  let i = 0;
  while (i < args.length && /^--?\w/.test(args[i]!)) {
    const name = args[i]!.replace(/^--?/, "");
    if (withValue.includes(name)) {
      flags[name] = args[i + 1] ?? "";
      i += 2;
    } else i++;
  }
  return { flags, rest: args.slice(i) };
}

/** The rule JSON from `'<json>'` or `-f file` with the name as id when it has none. */
function ruleJson(c: Client, args: string[], verb: "create" | "validate"): { name: string; json: string } | undefined {
  const { flags, rest } = flagsThenArgs(args, ["f"]);
  if (flags.f !== undefined) {
    if (rest.length !== 1) {
      c.usage("Expect rule name.\n");
      return undefined;
    }
    if (verb === "create") c.note(`Creating a new rule from file ${flags.f}.\n`);
    let text: string;
    try {
      text = readFileSync(flags.f, "utf8");
    } catch {
      if (existsSync(flags.f)) c.fail(`Failed to read from rule definition file ${flags.f}.\n`);
      else c.usage(`The specified rule defenition file ${flags.f} is not existed.\n`);
      return undefined;
    }
    return { name: rest[0]!, json: text };
  }
  if (rest.length !== 2) {
    c.usage(`Expect rule name and json.\nBut found ${rest.length} args:[${rest.join(" ")}].\n`);
    return undefined;
  }
  return { name: rest[0]!, json: rest[1]! };
}

function withId(json: string, name: string): string {
  try {
    const v = JSON.parse(json) as Record<string, unknown>;
    if (v && typeof v === "object" && !Array.isArray(v) && (v.id === undefined || v.id === "")) return JSON.stringify({ ...v, id: name });
  } catch {
    // sent as is: the server reports the JSON error
  }
  return json;
}

const DURATION_OPTS = ["lateTolerance", "checkpointInterval"];

function goDuration(ms: number): string {
  if (ms === 0) return "0s";
  const h = Math.floor(ms / 3600000);
  const m = Math.floor((ms % 3600000) / 60000);
  const s = (ms % 60000) / 1000;
  if (h) return `${h}h${m}m${s}s`;
  if (m) return `${m}m${s}s`;
  return ms < 1000 ? `${ms}ms` : `${s}s`;
}

/** `describe rule`: the rule re-marshalled in struct order, options with their defaults. */
function describeRule(text: string): string {
  const r = JSON.parse(text) as Record<string, unknown>;
  const opts = (r.options ?? {}) as Record<string, unknown>;
  const o: Record<string, unknown> = {
    debug: false,
    isEventTime: false,
    lateTolerance: 1000,
    concurrency: 1,
    bufferLength: 1024,
    sendMetaToSink: false,
    sendError: false,
    qos: 0,
    checkpointInterval: 300000,
    restartStrategy: {},
    ...opts,
  };
  for (const k of DURATION_OPTS) if (typeof o[k] === "number") o[k] = goDuration(o[k] as number);
  const out: Record<string, unknown> = { triggered: r.triggered ?? true, id: r.id };
  if (r.name) out.name = r.name;
  if (r.version) out.version = r.version;
  if (r.temp) out.temp = r.temp;
  out.sql = r.sql;
  if (r.graph) out.graph = r.graph;
  out.actions = r.actions;
  out.options = o;
  if (r.tags) out.tags = r.tags;
  return JSON.stringify(out, null, "  ");
}

export async function ruleCommand(c: Client, verb: string, args: string[]): Promise<void> {
  if (verb === "show") {
    const r = await c.call("GET", "/rules");
    if (!ok(r)) return c.fail(errorMessage(r) + "\n");
    const list = JSON.parse(r.text) as unknown[];
    if (list.length) c.print(indentJson(r.text) + "\n");
    else c.note("No rule definitions are found.\n");
    return;
  }
  if (verb === "create" || verb === "validate") {
    const j = ruleJson(c, args, verb);
    if (!j) return;
    const body = withId(j.json, j.name);
    if (verb === "validate") {
      const r = await c.call("POST", "/rules/validate", body);
      if (ok(r)) c.print("The rule has been successfully validated and is confirmed to be correct.\n");
      else c.fail(r.text + "\n");
      return;
    }
    const r = await c.call("POST", "/rules", body);
    if (ok(r)) {
      c.print(`Rule ${j.name} was created successfully, please use 'bin/kuiper getstatus rule ${j.name}' command to get rule status.\n`);
      return;
    }
    let id = "";
    try {
      id = String((JSON.parse(body) as { id?: unknown }).id ?? "");
    } catch {
      // invalid JSON: empty id
    }
    c.fail(`Create rule ${id} error : ${errorMessage(r)}.\n`);
    return;
  }
  const name = args[0];
  if (name === undefined || args.length !== 1) {
    c.usage("Expect rule name.\n");
    return;
  }
  const ie = idError(name);
  if (ie) {
    c.usage(ie + "\n");
    return;
  }
  const enc = encodeURIComponent(name);
  switch (verb) {
    case "describe": {
      const r = await c.call("GET", `/rules/${enc}`);
      if (ok(r)) c.print(describeRule(r.text) + "\n\n");
      else c.fail(`Desc rule error : Rule ${name} is not found..\n`);
      return;
    }
    case "getstatus": {
      const r = await c.call("GET", `/rules/${enc}/status`);
      if (ok(r)) c.print(r.text + "\n");
      else c.fail(`Rule ${name} is not found\n`);
      return;
    }
    case "gettopo": {
      const r = await c.call("GET", `/rules/${enc}/topo`);
      if (ok(r)) c.print(indentJson(r.text) + "\n");
      else c.fail((r.status === 404 ? `Rule ${name} is not found` : `Fail to get rule ${name}'s topo, make sure the rule has been started before`) + "\n");
      return;
    }
    case "start":
    case "stop":
    case "restart": {
      const r = await c.call("POST", `/rules/${enc}/${verb}`);
      if (ok(r)) c.print(verb === "start" ? `Rule ${name} was started\n` : verb === "stop" ? `Rule ${name} was stopped.\n` : `Rule ${name} was restarted.\n`);
      else c.fail((r.status === 404 ? `Rule ${name} is not found in registry, please check if it is created` : errorMessage(r).replace(/^\w+ rule error: /, "")) + "\n");
      return;
    }
    case "explain": {
      // floe's addition: eKuiper's CLI has no `explain rule` (its REST API has /rules/{id}/explain).
      const r = await c.call("GET", `/rules/${enc}/explain`);
      if (ok(r)) c.print(r.text.replace(/\n?$/, "\n"));
      else c.fail(`Explain rule error : ${errorMessage(r)}\n`);
      return;
    }
    case "drop": {
      const r = await c.call("DELETE", `/rules/${enc}`);
      if (ok(r)) c.print(`Rule ${name} is dropped.\n`);
      else c.fail(`Drop rule error : rule ${name} not found.\n`);
      return;
    }
  }
}
