/**
 * Outbound URLs in every spelling of loopback, against every HTTP-class connection floe opens to a
 * user-supplied address. The connectors come from the source, sink and lookup registries: each type
 * is classified below (HTTP-class, with the props that aim it; or why it is not), so a connector
 * added later fails here until it is, and an HTTP-class one is attacked the day it lands. The OTLP
 * exporter and `file` URLs of uploads and imports are attacked the same way.
 *
 * A "secret" listener runs on 127.0.0.1 and [::1] (same port): no attack may reach it, and with
 * `basic.enablePrivateNet` each connector does reach it (so "no hit" is not vacuous). A "public"
 * host is an injected name whose public address the test transport carries to a loopback server,
 * which answers with redirects to the secret listener.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { MemoryPubSub } from "../../lib/connectors/memory/pubsub.ts";
import { createLookupSource, LOOKUP_TYPES } from "../../lib/connectors/lookups.ts";
import { createNetGuard, systemResolve, type NetGuard, type Resolver } from "../../lib/net/guard.ts";
import { SinkItem } from "../../lib/sink/connector.ts";
import { ConnectionReporter } from "../../lib/core/connection.ts";
import { NodeMetrics } from "../../lib/core/metrics.ts";
import { createSinkConnector, SINK_TYPES } from "../../lib/connectors/sinks.ts";
import { createSourceConnector, SOURCE_TYPES } from "../../lib/connectors/sources.ts";
import { OtlpExporter } from "../../lib/runtime/trace/otlp.ts";
import { Span } from "../../lib/runtime/trace/span.ts";
import { readFileRef } from "../../lib/server/file-ref.ts";
import { createRuntimeEnv } from "../../lib/runtime/env.ts";
import { waitFor } from "../helpers/runtime.ts";
import { probe } from "../helpers/source.ts";

// ---------------------------------------------------------------------------------------------
// The secret listener, the public host and the transport that reaches it.

let hits: string[] = [];
const secretHandler = {
  fetch(req: Request, server: Bun.Server<undefined>): Response | undefined {
    hits.push(`${req.method} ${new URL(req.url).pathname}`);
    if (server.upgrade(req)) return undefined;
    return new Response("secret");
  },
  websocket: { message() {} },
};
let secret4: Bun.Server<undefined>;
let secret6: Bun.Server<undefined>;
let pub: Bun.Server<undefined>;

const PUBLIC_IP = "93.184.216.34";
const names: Resolver = async (host) => (host === "public.example" ? [PUBLIC_IP] : host === "rebind.example" ? ["127.0.0.1"] : systemResolve(host));
/** A connection to the public address goes to the loopback server behind it (same port). */
const route = (url: string) => url.replace(PUBLIC_IP, "127.0.0.1");
const transport = {
  resolve: names,
  fetch: (url: string, init: BunFetchRequestInit) => fetch(route(url), init),
  webSocket: (url: string, init: Bun.WebSocketOptions) => new WebSocket(route(url), init),
};
const guarded = (): NetGuard => createNetGuard(transport);
const open = (): NetGuard => createNetGuard({ ...transport, allowPrivate: true });

beforeAll(() => {
  secret4 = Bun.serve({ hostname: "127.0.0.1", port: 0, ...secretHandler });
  secret6 = Bun.serve({ hostname: "::1", port: secret4.port, ...secretHandler });
  pub = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch(req) {
      const u = new URL(req.url);
      // Every hop to the secret listener: 307 keeps POST (the exporter, the REST sink), 302 for GETs.
      return new Response(null, { status: req.method === "GET" ? 302 : 307, headers: { Location: `${u.protocol === "ws:" ? "ws" : "http"}://127.0.0.1:${secret4.port}/redirected` } });
    },
  });
});

afterAll(() => {
  secret4.stop(true);
  secret6.stop(true);
  pub.stop(true);
});

interface Target {
  readonly label: string;
  /** `host:port` as a URL spells it. */
  readonly host: () => string;
  /** The refusal text. */
  readonly refused: RegExp;
}

const internal = (ip: string) => new RegExp(`ip ${ip.replace(/\./g, "\\.")} is in internal network`);
const at = (h: string) => () => `${h}:${secret4.port}`;

const TARGETS: readonly Target[] = [
  { label: "127.0.0.1", host: at("127.0.0.1"), refused: internal("127.0.0.1") },
  { label: "127.1", host: at("127.1"), refused: internal("127.0.0.1") },
  { label: "2130706433", host: at("2130706433"), refused: internal("127.0.0.1") },
  { label: "0x7f.1", host: at("0x7f.1"), refused: internal("127.0.0.1") },
  { label: "[::1]", host: at("[::1]"), refused: internal("::1") },
  { label: "[::ffff:127.0.0.1]", host: at("[::ffff:127.0.0.1]"), refused: internal("127.0.0.1") },
  { label: "localhost", host: at("localhost"), refused: /ip (127\.0\.0\.1|::1) is in internal network/ },
  { label: "a name resolving to 127.0.0.1", host: at("rebind.example"), refused: internal("127.0.0.1") },
  { label: "0.0.0.0", host: at("0.0.0.0"), refused: internal("0.0.0.0") },
  { label: "169.254.169.254", host: () => "169.254.169.254:80", refused: internal("169.254.169.254") },
  { label: "10.0.0.1", host: () => "10.0.0.1:80", refused: internal("10.0.0.1") },
  { label: "192.168.1.1", host: () => "192.168.1.1:80", refused: internal("192.168.1.1") },
  // A public host that redirects to the secret listener: the hop is refused (a websocket handshake never follows it).
  { label: "a redirect to loopback", host: () => `public.example:${pub.port}`, refused: /ip 127\.0\.0\.1 is in internal network|Expected 101 status code: 30\d/ },
];

// ---------------------------------------------------------------------------------------------
// The connections under attack: each tries `host` and answers with the failure it saw (or "").

type Attack = (host: string, guard: NetGuard) => Promise<string>;

const text = (e: unknown) => (e instanceof Error ? e.message : String(e));

function env(guard: NetGuard) {
  return createRuntimeEnv({ outbound: guard, pubsub: new MemoryPubSub(), log: () => {} });
}

/** Opens a source; a refusal at open is the answer, else the first exception (or connection failure). */
async function sourceAttack(type: string, props: Record<string, unknown>, guard: NetGuard): Promise<string> {
  const src = createSourceConnector(type, props, env(guard));
  const p = probe();
  try {
    await src.open(p.ctx);
    await waitFor(() => p.exceptions.length > 0 || p.ctx.status.status === -1 || hits.length > 0, `${type}: an outcome`);
    return p.exceptions[0] ?? p.ctx.status.lastMessage;
  } catch (e) {
    return text(e);
  } finally {
    await src.close();
  }
}

async function sinkAttack(type: string, props: Record<string, unknown>, guard: NetGuard): Promise<string> {
  const sink = createSinkConnector(type, props, env(guard));
  const status = new ConnectionReporter();
  try {
    // A client sink opens at its first connection: a failed handshake shows in its status instead.
    const opened = Promise.resolve(sink.open({ ruleId: "r", name: `${type}_0`, status, metrics: new NodeMetrics("sink", `${type}_0`), log: () => {} }));
    let settled = false;
    const failed = waitFor(() => settled || status.status === -1, `${type}: opened or failed`).catch(() => undefined);
    await Promise.race([opened, failed]).finally(() => (settled = true));
    if (status.status === -1) return status.lastMessage;
    await sink.send(new SinkItem('{"a":1}', null, 1));
    await waitFor(() => hits.length > 0, `${type}: a hit`, 2000).catch(() => undefined);
    return "";
  } catch (e) {
    return text(e);
  } finally {
    await sink.close();
  }
}

/** HTTP-class connector types of each registry, with the props aiming them at `host`. */
const HTTP_CLASS: Readonly<Record<string, Attack>> = {
  "source:httppull": (host, g) => sourceAttack("httppull", { url: `http://${host}/pull`, interval: 0 }, g),
  "source:websocket": (host, g) => sourceAttack("websocket", { datasource: "/ws", addr: host, scheme: "ws" }, g),
  "sink:rest": (host, g) => sinkAttack("rest", { url: `http://${host}/rest`, method: "post" }, g),
  "sink:websocket": (host, g) => sinkAttack("websocket", { path: "/ws", addr: host, scheme: "ws" }, g),
  "lookup:httppull": async (host, g) => {
    const src = createLookupSource("httppull", { url: `http://${host}/lookup` }, env(g));
    try {
      await src.open();
      await src.lookup(["id"], [1n]);
      return "";
    } catch (e) {
      return text(e);
    } finally {
      await src.close();
    }
  },
};

/** Every other connector type, and why it is not HTTP-class. */
const BROKER = "a broker or database client: its policy allows private addresses (lib/net/brokers.ts)";
const LOCAL = "opens no connection (in-process, files, standard streams, or a server endpoint that listens)";
const NOT_HTTP: Readonly<Record<string, string>> = {
  "source:mqtt": BROKER,
  "source:nats": BROKER,
  "source:redissub": BROKER,
  "source:sql": BROKER,
  "source:memory": LOCAL,
  "source:file": LOCAL,
  "source:simulator": LOCAL,
  "source:httppush": LOCAL,
  "sink:mqtt": BROKER,
  "sink:nats": BROKER,
  "sink:redis": BROKER,
  "sink:redisPub": BROKER,
  "sink:sql": BROKER,
  "sink:file": LOCAL,
  "sink:log": LOCAL,
  "sink:logToMemory": LOCAL,
  "sink:memory": LOCAL,
  "sink:nop": LOCAL,
  "sink:sse": LOCAL,
  "sink:stdout": LOCAL,
  "lookup:redis": BROKER,
  "lookup:sql": BROKER,
  "lookup:memory": LOCAL,
  "lookup:simulator": LOCAL,
};

/** The other HTTP-class connections: the OTLP exporter and `file` URLs of uploads and imports. */
const OTHERS: Readonly<Record<string, Attack>> = {
  otlp: async (host, g) => {
    const logs: string[] = [];
    const exporter = new OtlpExporter(`http://${host}/otlp`, "svc", g, (l) => void logs.push(l));
    const span = new Span("source_s", "0af7651916cd43dd8448eb211c80319c", null, "", "r", null);
    span.end = span.start + 1;
    exporter.add(span);
    await exporter.close();
    // The export's own failure (the exporter also says at once that a collector is refused).
    return exporter.sent === 1 ? "" : logs.filter((l) => l.includes(" failed ")).join("\n");
  },
  "uploads by URL": async (host, g) => {
    try {
      await readFileRef({ config: { basic: { allowExternalFileAccess: false } }, uploadsDir: mkdtempSync(join(tmpdir(), "floe-up-")), outbound: g }, `http://${host}/file.txt`);
      return "";
    } catch (e) {
      return text(e);
    }
  },
};

const ATTACKED: readonly [string, Attack][] = [...Object.entries(HTTP_CLASS), ...Object.entries(OTHERS)];

describe("the connector registries", () => {
  test("every connector type is classified: HTTP-class (attacked below) or not, with the reason", () => {
    const registered = [...SOURCE_TYPES.map((t) => `source:${t}`), ...SINK_TYPES.map((t) => `sink:${t}`), ...LOOKUP_TYPES.map((t) => `lookup:${t}`)].sort();
    const classified = [...Object.keys(HTTP_CLASS), ...Object.keys(NOT_HTTP)].sort();
    expect(classified).toEqual(registered);
  });
});

describe.each(ATTACKED)("%s", (_name, attack) => {
  test.each(TARGETS.map((t) => [t.label, t] as const))("refuses %s; nothing reaches the local listener", async (_label, target) => {
    hits = [];
    expect(await attack(target.host(), guarded())).toMatch(target.refused);
    expect(hits).toEqual([]);
  });

  test("with basic.enablePrivateNet it reaches the local listener (the check above is not vacuous)", async () => {
    hits = [];
    await attack(`127.0.0.1:${secret4.port}`, open());
    await waitFor(() => hits.length > 0, "a hit on the local listener");
  });
});
