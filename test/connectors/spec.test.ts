/**
 * The connector spec is the one declaration of a connector: every spec in connectors/index.ts
 * shows up in the source, sink and lookup registries, in `/metadata`'s lists and in graph rules'
 * source node types; and a spec added to a list shows up in every registry built from that list.
 */
import { describe, expect, test } from "bun:test";
import { CONNECTORS } from "../../lib/connectors/index.ts";
import { ConnectionRegistry } from "../../lib/connectors/connections.ts";
import { SHIPPED_SOURCES } from "../../lib/connectors/conf-files.ts";
import { createLookupRegistry, LOOKUP_TYPES, type LookupEnv } from "../../lib/connectors/lookups.ts";
import { createSinkRegistry, SINK_TYPES, type SinkEnv } from "../../lib/connectors/sinks.ts";
import { createSourceRegistry, SOURCE_NODE_TYPES, SOURCE_TYPES, type SourceConnectorEnv } from "../../lib/connectors/sources.ts";
import { rolesOf, type ConnectorSpec } from "../../lib/connectors/spec.ts";
import { ConnectionReporter } from "../../lib/core/connection.ts";
import type { LookupSource } from "../../lib/lookup/table.ts";
import { parseRuleOptions } from "../../lib/plan/rule-options.ts";
import { createRuntimeEnv } from "../../lib/runtime/env.ts";
import { planRuleGraph } from "../../lib/runtime/graph-plan.ts";
import type { Engine } from "../../lib/server/engine.ts";
import { createMetadataRoutes, metadataRoutes } from "../../lib/server/metadata.ts";
import { Router, type RouteDef } from "../../lib/server/router.ts";
import type { SinkConnector } from "../../lib/sink/connector.ts";
import type { SourceConnector } from "../../lib/source/connector.ts";

/** One request to `routes` in-process; the connector routes under test do not read the engine. */
async function call(routes: readonly RouteDef<Engine>[], method: string, path: string, body = ""): Promise<{ status: number; text: string }> {
  const url = new URL(`http://floe${path}`);
  const request = new Request(url.href, { method, body: method === "GET" ? undefined : body });
  const ctx = { method, path: url.pathname, query: url.searchParams, headers: request.headers, request, text: async () => body, dispatch: async () => new Response(null, { status: 500 }) };
  const r = await new Router(routes).dispatch(ctx, {} as unknown as Engine);
  return { status: r.status, text: await r.text() };
}

async function names(routes: readonly RouteDef<Engine>[], path: string): Promise<string[]> {
  const r = await call(routes, "GET", path);
  return r.text === "" ? [] : (JSON.parse(r.text) as { name: string }[]).map((x) => x.name);
}

/** The names of a role kind that /metadata lists (floe's own, `unlisted` or `none`, left out). */
function listed(kind: "sources" | "sinks" | "lookups" | "connections"): string[] {
  return [...rolesOf(CONNECTORS, kind)].filter(([, r]) => (r.metadata ?? "listed") === "listed").map(([n]) => n).sort();
}

describe("every spec in the list", () => {
  test("each technology is declared once and its role names are unique", () => {
    const techs = CONNECTORS.map((s) => s.tech);
    expect(new Set(techs).size).toBe(techs.length);
    for (const kind of ["sources", "sinks", "lookups", "connections"] as const) expect(() => rolesOf(CONNECTORS, kind)).not.toThrow();
  });

  test("its sources, sinks and lookups are the registries' types", () => {
    expect([...SOURCE_TYPES].sort()).toEqual([...rolesOf(CONNECTORS, "sources").keys()].map((n) => n.toLowerCase()).sort());
    expect([...SINK_TYPES].sort()).toEqual([...rolesOf(CONNECTORS, "sinks").keys()].sort());
    expect([...LOOKUP_TYPES].sort()).toEqual([...rolesOf(CONNECTORS, "lookups").keys()].map((n) => n.toLowerCase()).sort());
  });

  test("the registries hold what floe has always had, by eKuiper's names", () => {
    expect([...SOURCE_TYPES].sort()).toEqual(["file", "httppull", "httppush", "memory", "mqtt", "nats", "redissub", "simulator", "sql", "websocket"]);
    expect([...SINK_TYPES].sort()).toEqual(["file", "log", "logToMemory", "memory", "mqtt", "nats", "nop", "redis", "redisPub", "rest", "sql", "sse", "stdout", "websocket"]);
    expect([...LOOKUP_TYPES].sort()).toEqual(["httppull", "memory", "redis", "simulator", "sql"]);
    expect([...rolesOf(CONNECTORS, "connections").keys()].sort()).toEqual(["httppush", "mqtt", "nats", "sse", "websocket"]);
  });

  test("its listed roles are /metadata's lists", async () => {
    expect(await names(metadataRoutes, "/metadata/sources")).toEqual(listed("sources"));
    expect(await names(metadataRoutes, "/metadata/sources?kind=lookup")).toEqual(listed("lookups"));
    expect(await names(metadataRoutes, "/metadata/sinks")).toEqual(listed("sinks"));
    expect(await names(metadataRoutes, "/metadata/connections")).toEqual(listed("connections"));
  });

  test("every source and lookup with metadata has shipped confKeys and answers /metadata/sources/<name>", async () => {
    for (const kind of ["sources", "lookups"] as const)
      for (const [name, r] of rolesOf(CONNECTORS, kind)) {
        if (r.metadata === "none") continue;
        expect(Object.keys(SHIPPED_SOURCES)).toContain(name);
        const m = await call(metadataRoutes, "GET", `/metadata/sources/${name}`);
        expect(`${name} ${m.status}`).toBe(`${name} 200`);
      }
  });

  test("every source is a graph rule's source nodeType, in eKuiper's spelling and lowercased", () => {
    for (const name of rolesOf(CONNECTORS, "sources").keys()) {
      expect(SOURCE_NODE_TYPES.has(name)).toBe(true);
      expect(SOURCE_NODE_TYPES.has(name.toLowerCase())).toBe(true);
    }
  });

  test("graph planning accepts every source's nodeType and refuses another", () => {
    const env = createRuntimeEnv({ log: () => {} });
    const plan = (nodeType: string) => () =>
      planRuleGraph(
        "g",
        { nodes: { s: { type: "source", nodeType, props: { datasource: "t" } }, k: { type: "sink", nodeType: "log", props: {} } }, topo: { sources: ["s"], edges: { s: ["k"] } } },
        false,
        new Map(),
        parseRuleOptions("g", {}),
        env,
        Date.now,
        () => false,
      );
    for (const name of rolesOf(CONNECTORS, "sources").keys()) {
      expect(plan(name)).not.toThrow();
      expect(plan(name.toLowerCase())).not.toThrow();
    }
    expect(plan("nope")).toThrow("source type nope not found");
  });
});

describe("a connector spec added to a list", () => {
  const made: string[] = [];
  const fakeSource = { fake: true } as unknown as SourceConnector;
  const fakeSink = { fake: true } as unknown as SinkConnector;
  const fakeLookup = { fake: true } as unknown as LookupSource;
  const status = new ConnectionReporter();
  status.connected();
  const fake: ConnectorSpec = {
    tech: "fake",
    sources: { fakeWire: { create: () => (made.push("source"), fakeSource), tuples: true, remote: true, ping: async () => ({ code: 1003, message: "fake is down" }) } },
    sinks: { fakeWire: { create: () => (made.push("sink"), fakeSink), props: { level: 3 } } },
    lookups: { fakeWire: { create: () => (made.push("lookup"), fakeLookup) } },
    connections: { fakeWire: { props: { server: "" }, validate: () => undefined, open: () => ({ status, close: async () => {} }) } },
    confKeys: { fakeWire: { default: { server: "fake://here" } } },
  };
  const list = [...CONNECTORS, fake];

  test("the source, sink and lookup registries create it by its type", () => {
    const sources = createSourceRegistry(list);
    expect(sources.types).toContain("fakewire");
    expect(sources.create("fakewire", {}, {} as SourceConnectorEnv)).toBe(fakeSource);
    expect(sources.isByteSource("fakewire")).toBe(false);
    expect(sources.names.get("fakewire")).toBe("fakeWire");
    expect(createSinkRegistry(list).create("fakeWire", {}, {} as SinkEnv)).toBe(fakeSink);
    expect(createLookupRegistry(list).create("fakewire", {}, {} as LookupEnv)).toBe(fakeLookup);
    expect(made).toEqual(["source", "sink", "lookup"]);
    // Not in the daemon's list.
    expect(() => createSinkRegistry(CONNECTORS).create("fakeWire", {}, {} as SinkEnv)).toThrow("sink fakeWire is not defined");
  });

  test("graph rules take it as a source nodeType", () => {
    const t = createSourceRegistry(list).nodeTypes;
    expect(t.has("fakeWire")).toBe(true);
    expect(t.has("fakewire")).toBe(true);
  });

  test("/metadata lists it and answers for it, and its connectivity check runs", async () => {
    const routes = createMetadataRoutes(list);
    expect(await names(routes, "/metadata/sources")).toContain("fakeWire");
    expect(await names(routes, "/metadata/sources?kind=lookup")).toContain("fakeWire");
    expect(await names(routes, "/metadata/sinks")).toContain("fakeWire");
    expect(await names(routes, "/metadata/connections")).toContain("fakeWire");
    const src = JSON.parse((await call(routes, "GET", "/metadata/sources/fakeWire")).text) as { properties: { default: { name: string; default: unknown }[] } };
    expect(src.properties.default.map((p) => [p.name, p.default])).toEqual([["server", "fake://here"]]);
    const sink = JSON.parse((await call(routes, "GET", "/metadata/sinks/fakeWire")).text) as { properties: { name: string; type: string }[] };
    expect(sink.properties.map((p) => [p.name, p.type])).toEqual([["level", "int"]]);
    expect(await call(routes, "POST", "/metadata/sources/connection/fakeWire", "{}")).toEqual({ status: 400, text: '{"error":1003,"message":"fake is down"}\n' });
    expect(await call(routes, "POST", "/metadata/sinks/connection/fakeWire", "{}")).toEqual({ status: 400, text: `{"error":1000,"message":"sink fakeWire doesn't support ping connection"}\n` });
    // The daemon's routes do not know it.
    expect((await call(metadataRoutes, "GET", "/metadata/sources/fakeWire")).status).toBe(400);
  });

  test("named connections of its type open its live client", async () => {
    const reg = new ConnectionRegistry(process.cwd(), () => {}, undefined, list);
    reg.open("c1", "fakeWire", {});
    expect(reg.state("c1")).toEqual({ status: "connected" });
    expect(reg.gauges()).toEqual([["c1", 1]]);
    await reg.closeAll();
    const without = new ConnectionRegistry(process.cwd(), () => {}, undefined, CONNECTORS);
    without.open("c1", "fakeWire", {});
    expect(without.state("c1")).toEqual({});
    await without.closeAll();
  });
});
