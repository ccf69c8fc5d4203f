/**
 * `floe run` with a NATS stream (pipe-mode.md's live runner takes any connector): core messages
 * printed to stdout, `eofMessage` ends the run; a JetStream stream read from its start.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import { NatsServer } from "../helpers/nats.ts";
import { waitFor } from "../helpers/runtime.ts";

const root = join(import.meta.dir, "../..");
const dir = mkdtempSync(join(tmpdir(), "floe-pipe-nats-"));
let server: NatsServer;
let nc: NatsConnection;

beforeAll(async () => {
  server = await NatsServer.start();
  nc = await connect({ servers: server.url });
});
afterAll(async () => {
  await nc.close();
  await server.stop();
});

function floe(args: string[], env: Record<string, string> = {}) {
  return Bun.spawn([process.execPath, join(root, "cli.ts"), "run", ...args], {
    cwd: dir,
    env: { ...process.env, ...env },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
}

async function drain(s: ReadableStream<Uint8Array> | number | undefined, into: (t: string) => void): Promise<void> {
  if (!(s instanceof ReadableStream)) return;
  for await (const c of s) into(new TextDecoder().decode(c));
}

test("a core NATS stream is printed to stdout until its eofMessage", async () => {
  const rule = join(dir, "core.sql");
  writeFileSync(rule, `CREATE STREAM s () WITH (TYPE="nats", DATASOURCE="pipe.*", CONF_KEY="p");\nSELECT n, meta(subject) AS subj FROM s WHERE n > 1`);
  const p = floe([rule], { NATS__P__SERVER: server.url, NATS__P__EOFMESSAGE: Buffer.from("end").toString("base64") });
  let err = "";
  let out = "";
  const pumps = Promise.all([drain(p.stderr, (t) => (err += t)), drain(p.stdout, (t) => (out += t))]);
  await waitFor(() => err.includes("subscribed"), "the source to subscribe", 15_000);
  for (let n = 0; n < 4; n++) nc.publish(`pipe.d${n}`, JSON.stringify({ n }));
  nc.publish("pipe.x", "end");
  const code = await p.exited;
  await pumps;
  expect(err).toBe(`floe: source s: connected to nats://127.0.0.1:${server.port}, subscribed to pipe.*\n`);
  expect(code).toBe(0);
  expect(out).toBe('{"n":2,"subj":"pipe.d2"}\n{"n":3,"subj":"pipe.d3"}\n');
}, 30_000);

test("a JetStream stream is read from its first message", async () => {
  const jsm = await jetstreamManager(nc);
  await jsm.streams.add({ name: "PIPE", subjects: ["pj.>"] });
  const js = jetstream(nc);
  for (let n = 0; n < 3; n++) await js.publish("pj.a", JSON.stringify({ n }));
  await js.publish("pj.a", "end");
  const rule = join(dir, "js.sql");
  writeFileSync(rule, `CREATE STREAM s () WITH (TYPE="nats", DATASOURCE="pj.>", CONF_KEY="j");\nSELECT n, meta(seq) AS seq FROM s`);
  const p = floe([rule], { NATS__J__SERVER: server.url, NATS__J__STREAM: "PIPE", NATS__J__EOFMESSAGE: Buffer.from("end").toString("base64") });
  let err = "";
  let out = "";
  const pumps = Promise.all([drain(p.stderr, (t) => (err += t)), drain(p.stdout, (t) => (out += t))]);
  const code = await p.exited;
  await pumps;
  expect(err).toStartWith(`floe: source s: connected to nats://127.0.0.1:${server.port}, consuming stream PIPE with consumer `);
  expect(code).toBe(0);
  expect(out).toBe('{"n":0,"seq":1}\n{"n":1,"seq":2}\n{"n":2,"seq":3}\n');
}, 30_000);
