/** Plugin, service, schema and script verbs (config-and-cli.md §8.5); floe supports scripts and protobuf schemas. */
import { errorMessage, indentJson, ok, type Client } from "./client.ts";

const PLUGIN_TYPES: Record<string, string> = { source: "sources", sink: "sinks", function: "functions", portable: "portables", wasm: "wasm" };

export async function pluginCommand(c: Client, verb: string, args: string[]): Promise<void> {
  const [type, name, json] = args;
  if (verb === "show" && type === undefined) {
    c.usage("Expect plugin type.\n");
    return;
  }
  const t = type === undefined ? undefined : PLUGIN_TYPES[type];
  if (!t) {
    c.usage(`Invalid plugin type ${type ?? ""}, should be "source", "sink", "function" or "portable" or "wasm".\n\n`);
    return;
  }
  if (verb === "show") {
    const r = await c.call("GET", `/plugins/${t}`);
    const list = ok(r) ? (JSON.parse(r.text) as string[]) : [];
    if (list.length) c.print(t === "portables" ? indentJson(r.text) + "\n" : list.join("\n") + "\n");
    else c.note("No plugin is found.\n");
    return;
  }
  if (name === undefined) {
    c.usage(verb === "create" ? "Expect plugin type and name.\n" : "Expect plugin name.\n");
    return;
  }
  if (verb === "create") {
    const r = await c.call("POST", `/plugins/${t}`, json ?? "{}");
    if (ok(r)) c.print(`Plugin ${name} is created.\n`);
    else c.fail(`Create plugin error: ${errorMessage(r)}\n`);
  } else if (verb === "describe") {
    const r = await c.call("GET", `/plugins/${t}/${encodeURIComponent(name)}`);
    if (ok(r)) c.print(indentJson(r.text) + "\n");
    else c.fail("Describe plugin error: not found\n");
  } else if (verb === "drop") {
    const r = await c.call("DELETE", `/plugins/${t}/${encodeURIComponent(name)}`);
    if (ok(r)) c.print(`Plugin ${name} is dropped and Kuiper must restart for the change to take effect.\n`);
    else c.fail(`Drop plugin error: ${errorMessage(r)}\n`);
  }
}

export async function serviceCommand(c: Client, verb: string, kind: string, args: string[]): Promise<void> {
  if (verb === "show") {
    const r = await c.call("GET", kind === "service_funcs" ? "/services/functions" : "/services");
    const list = ok(r) ? (JSON.parse(r.text) as unknown[]) : [];
    if (list.length) c.print(indentJson(r.text) + "\n");
    else c.note("No service definitions are found.\n");
    return;
  }
  const name = args[0] ?? "";
  if (verb === "create") {
    if (args.length !== 2) {
      c.usage("Expect service name and json.\n");
      return;
    }
    const r = await c.call("POST", "/services", args[1]);
    if (ok(r)) c.print(`Service ${name} is created.\n`);
    else c.fail(`Create service error: ${errorMessage(r)}\n`);
  } else if (verb === "describe") {
    const r = await c.call("GET", kind === "service_func" ? `/services/functions/${encodeURIComponent(name)}` : `/services/${encodeURIComponent(name)}`);
    if (ok(r)) c.print(indentJson(r.text) + "\n");
    else c.fail(`Desc service error : ${errorMessage(r)}.\n`);
  } else if (verb === "drop") {
    const r = await c.call("DELETE", `/services/${encodeURIComponent(name)}`);
    if (ok(r)) c.print(`Service ${name} is dropped\n`);
    else c.fail(`Drop service error : ${errorMessage(r)}.\n`);
  }
}

export async function schemaCommand(c: Client, verb: string, args: string[]): Promise<void> {
  const [type, name, json] = args;
  if (verb === "show") {
    if (type === undefined) {
      c.usage("Expect schema type.\n");
      return;
    }
    const r = await c.call("GET", `/schemas/${encodeURIComponent(type)}`);
    const list = ok(r) ? (JSON.parse(r.text) as unknown[]) : [];
    if (list.length) c.print(indentJson(r.text) + "\n");
    else c.note("No schema definitions are found.\n");
    return;
  }
  if (type === undefined || name === undefined) {
    c.usage(verb === "create" ? "Expect plugin type, name and json.\n" : "Expect schema type and name.\n");
    return;
  }
  if (verb === "create") {
    // The CLI checks the JSON against its arguments before sending it, as eKuiper's does.
    let info: unknown;
    try {
      info = JSON.parse(json ?? "{}");
    } catch {
      info = undefined;
    }
    if (info && typeof info === "object" && !Array.isArray(info)) {
      const o = info as Record<string, unknown>;
      if (o.name !== name) {
        c.usage("Create schema error: name mismatch.\n");
        return;
      }
      if (o.content && o.file) {
        c.usage("Invalid body: Cannot specify both content and file\n");
        return;
      }
    }
    const r = await c.call("POST", `/schemas/${encodeURIComponent(type)}`, json ?? "{}");
    if (ok(r)) c.print(`Schema ${name} is created.\n`);
    else c.fail(`Create schema error: ${errorMessage(r)}\n`);
  } else if (verb === "describe") {
    const r = await c.call("GET", `/schemas/${encodeURIComponent(type)}/${encodeURIComponent(name)}`);
    if (ok(r)) c.print(indentJson(r.text) + "\n");
    else c.fail("Desc schema error : not found.\n");
  } else if (verb === "drop") {
    const r = await c.call("DELETE", `/schemas/${encodeURIComponent(type)}/${encodeURIComponent(name)}`);
    if (ok(r)) c.print(`Schema ${name} is dropped\n`);
    else c.fail(`Drop schema error : ${errorMessage(r)}.\n`);
  }
}

export async function scriptCommand(c: Client, verb: string, args: string[]): Promise<void> {
  if (verb === "show") {
    const r = await c.call("GET", "/udf/javascript");
    const list = ok(r) ? (JSON.parse(r.text) as unknown[]) : [];
    if (list.length) c.print(indentJson(r.text) + "\n");
    else c.note("No JavaScript functions are found.\n");
    return;
  }
  if (verb === "create") {
    const json = args[0];
    if (json === undefined) {
      c.usage("Expect JavaScript function definition JSON.\n");
      return;
    }
    let id = "";
    try {
      id = String((JSON.parse(json) as { id?: unknown }).id ?? "");
    } catch {
      // the server reports the JSON error
    }
    const r = await c.call("POST", "/udf/javascript", json);
    if (ok(r)) c.print(`JavaScript function ${id} is created.\n`);
    else c.fail(errorMessage(r) + "\n");
    return;
  }
  const id = args[0] ?? "";
  if (verb === "describe") {
    const r = await c.call("GET", `/udf/javascript/${encodeURIComponent(id)}`);
    if (ok(r)) c.print(indentJson(r.text) + "\n");
    else c.fail(errorMessage(r) + "\n");
  } else if (verb === "drop") {
    const r = await c.call("DELETE", `/udf/javascript/${encodeURIComponent(id)}`);
    if (ok(r)) c.print(`JavaScript function ${id} is dropped\n`);
    else c.fail(errorMessage(r) + "\n");
  }
}

export async function udfCommand(c: Client, verb: string, args: string[]): Promise<void> {
  if (verb === "show") {
    const r = await c.call("GET", "/plugins/udfs");
    const list = JSON.parse(r.text) as { name: string }[];
    c.print(list.map((x) => x.name + "\n").join(""));
    return;
  }
  const r = await c.call("GET", `/plugins/udfs/${encodeURIComponent(args[0] ?? "")}`);
  if (ok(r)) c.print(indentJson(r.text) + "\n");
  else c.fail("Describe udf error: not found\n");
}
