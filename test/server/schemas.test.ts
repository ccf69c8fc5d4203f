/**
 * The schema registry on a running `floe serve` (rest-api.md §14.4): CRUD with eKuiper's texts,
 * `custom` refused, stream validation at CREATE, persistence across a restart, export/import,
 * multipart upload; then protobuf end to end through a real broker (rules-and-sinks.md §13.5).
 */
import { afterAll, afterEach, beforeAll, expect, test } from "bun:test";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import mqtt from "mqtt";
import protobuf from "protobufjs";
import { Mosquitto } from "../helpers/mosquitto.ts";
import { makeZip } from "../helpers/zip.ts";
import { waitFor, waitForValue } from "../helpers/wait.ts";
import { startFloe, tempHome, type DaemonProc } from "./daemon.ts";

const BOOK = 'syntax = "proto3";\nmessage Book {\n  int64 id = 1;\n  string title = 2;\n  repeated string tags = 3;\n  Author author = 4;\n  Kind kind = 5;\n}\nmessage Author { string name = 1; int32 born = 2; }\nenum Kind { PAPER = 0; EBOOK = 1; }\n';
const OUT = 'syntax = "proto3";\nmessage Out { int64 id = 1; string who = 2; int64 n = 3; }\n';

let d: DaemonProc | undefined;
const dir = tempHome();

// Each test starts its own daemon: stopped after it (left running, they outlived the suite).
afterEach(async () => {
  if (d && d.proc.exitCode === null) await d.stop();
});

const errorOf = (message: string, code = 1000) => `{"error":${code},"message":${JSON.stringify(message)}}\n`;

test("schema CRUD answers eKuiper's statuses and texts; custom schemas are refused", async () => {
  d = await startFloe(dir);
  const call = d.call.bind(d);
  expect(await call("GET", "/schemas/protobuf")).toMatchObject({ status: 200, text: "[]" });
  expect(await call("GET", "/schemas/custom")).toMatchObject({ status: 200, text: "[]" });
  expect(await call("GET", "/schemas/avro")).toMatchObject({ status: 400, text: errorOf("schema type avro not found") });

  const created = await call("POST", "/schemas/protobuf", { name: "book", content: BOOK });
  expect([created.status, created.text, created.headers.get("Content-Type")]).toEqual([201, "protobuf schema book is created", "text/plain; charset=utf-8"]);
  expect((await call("GET", "/schemas/protobuf")).text).toBe('["book"]');
  const got = await call("GET", "/schemas/protobuf/book");
  expect(got.status).toBe(200);
  expect(JSON.parse(got.text)).toEqual({ type: "protobuf", name: "book", content: BOOK, file: join(dir, "data", "schemas", "protobuf", "book.proto") });
  expect(readFileSync(join(dir, "data", "schemas", "protobuf", "book.proto"), "utf8")).toBe(BOOK);

  const errors: [string, string, unknown, string][] = [
    ["POST", "/schemas/protobuf", "{", "Invalid body: Error decoding schema json: unexpected EOF"],
    ["POST", "/schemas/protobuf", { content: BOOK }, "Invalid body: name is required"],
    ["POST", "/schemas/protobuf", { name: "a/b", content: BOOK }, "Invalid body: id 'a/b' contains invalid characters: only alphanumeric, hyphens and underscores are allowed"],
    ["POST", "/schemas/protobuf", { name: "x", content: BOOK, file: "/tmp/x.proto" }, "Invalid body: cannot specify both content and file"],
    ["POST", "/schemas/avro", { name: "x", content: BOOK }, "Invalid body: unsupported schema type avro"],
    ["POST", "/schemas/protobuf", { name: "x" }, "Invalid body: must specify content or file"],
    ["POST", "/schemas/protobuf", { name: "book", content: BOOK }, "schema create command error: schema protobuf.book already registered"],
    ["POST", "/schemas/protobuf", { name: "broken", content: "message {" }, "schema create command error: broken.proto: illegal type name '{' (line 1)"],
    ["POST", "/schemas/custom", { name: "c1" }, "Invalid body: soFile is required"],
    ["POST", "/schemas/custom", { name: "c1", soFile: "file:///tmp/c1.so" }, "schema create command error: custom formats are Go plugins (.so): floe does not load Go plugins"],
    ["GET", "/schemas/protobuf/nope", undefined, "schema type protobuf id nope not found in registry"],
    ["GET", "/schemas/custom/c1", undefined, "schema type custom id c1 not found in registry"],
    ["GET", "/schemas/avro/x", undefined, "schema type avro not found in registry"],
    ["DELETE", "/schemas/protobuf/nope", undefined, "delete protobuf schema nope error: schema protobuf.nope not found"],
    ["DELETE", "/schemas/avro/x", undefined, "delete avro schema x error: schema type avro not found"],
    ["PUT", "/schemas/custom/c1", { soFile: "/tmp/c1.so" }, "schema update command error: custom formats are Go plugins (.so): floe does not load Go plugins"],
  ];
  for (const [m, p, b, want] of errors) expect([m, p, (await call(m, p, b as object)).text]).toEqual([m, p, errorOf(want)]);
  // eKuiper panics on a body naming another schema than the path: floe answers 500, never 2xx.
  expect((await call("PUT", "/schemas/protobuf/book", { name: "other", content: BOOK })).status).toBe(500);

  // Updates: content replaced; a version may not go down (equal is allowed).
  const v2 = BOOK.replace("Kind kind = 5;", "Kind kind = 5;\n  double price = 6;");
  expect(await call("PUT", "/schemas/protobuf/book", { content: v2, version: "2" })).toMatchObject({ status: 200, text: "protobuf schema book is updated" });
  expect(JSON.parse((await call("GET", "/schemas/protobuf/book")).text)).toMatchObject({ content: v2, version: "2" });
  expect((await call("PUT", "/schemas/protobuf/book", { content: BOOK, version: "1" })).text).toBe(errorOf("schema update command error: schema protobuf.book already registered with a newer version 2"));
  expect((await call("PUT", "/schemas/protobuf/book", { content: BOOK, version: "2" })).status).toBe(200);
  // PUT creates an absent schema; a `file` may be a path (allowExternalFileAccess is on in the shipped config or the upload dir).
  const upload = join(dir, "data", "uploads", "out.proto");
  writeFileSync(upload, OUT);
  expect(await call("PUT", "/schemas/protobuf/out", { file: `file://${upload}` })).toMatchObject({ status: 200, text: "protobuf schema out is updated" });
  expect(JSON.parse((await call("GET", "/schemas/protobuf/out")).text).content).toBe(OUT);

  expect(await call("DELETE", "/schemas/protobuf/out")).toMatchObject({ status: 200, text: "protobuf schema out is deleted" });
  expect(existsSync(join(dir, "data", "schemas", "protobuf", "out.proto"))).toBe(false);
  expect((await call("GET", "/schemas/protobuf")).text).toBe('["book"]');
});

test("multipart upload creates (201) or replaces (200) a schema; its errors are JSON without a newline", async () => {
  d = await startFloe(dir);
  const base = d.base;
  const put = (path: string, form: FormData | string, headers: Record<string, string> = {}) => fetch(base + path, { method: "PUT", body: form, headers });
  const form = (text: string, version?: string) => {
    const f = new FormData();
    f.append("file", new Blob([text]), "up.proto");
    if (version !== undefined) f.append("version", version);
    return f;
  };
  const r1 = await put("/schemas/protobuf/up/upload", form(OUT, "1"));
  expect([r1.status, r1.headers.get("Content-Type"), r1.headers.get("Location"), await r1.text()]).toEqual([201, "application/json", "/schemas/protobuf/up", '{"type":"protobuf","name":"up"}']);
  const r2 = await put("/schemas/protobuf/up/upload", form(OUT, "2"));
  expect(r2.status).toBe(200);
  const bad: [FormData | string, Record<string, string>, number, string][] = [
    ["x", { "Content-Type": "text/plain" }, 415, "Invalid content type: content type must be multipart/form-data"],
    [new FormData(), {}, 400, "Invalid multipart body: file field is required"],
    [form(OUT, "1"), {}, 400, "schema upsert error: schema protobuf.up already registered with a newer version 2"],
    [form(OUT, "x".repeat(4097)), {}, 400, "Invalid multipart body: version field is too large"],
    [form("message {", "3"), {}, 400, "Invalid schema: up.proto: illegal type name '{' (line 1)"],
  ];
  const two = form(OUT);
  two.append("file", new Blob([OUT]), "b.proto");
  bad.push([two, {}, 400, "Invalid multipart body: file field must appear exactly once"]);
  for (const [body, headers, status, message] of bad) {
    const r = await put("/schemas/protobuf/up/upload", body, headers);
    expect([r.status, r.headers.get("Content-Type"), await r.text()]).toEqual([status, "application/json", JSON.stringify({ error: 1000, message })]);
  }
  expect((await d.call("DELETE", "/schemas/protobuf/up")).status).toBe(200);

  // A zip brings the proto with the files it imports: each top-level <id>.proto becomes a schema.
  const shape = 'syntax = "proto3";\nimport "point.proto";\nmessage Shape { repeated Point pts = 1; }\n';
  const point = 'syntax = "proto3";\nmessage Point { int32 x = 1; int32 y = 2; }\n';
  const zipForm = (files: Parameters<typeof makeZip>[0]) => {
    const f = new FormData();
    f.append("file", new Blob([makeZip(files)]), "shape.zip");
    return f;
  };
  const z = await put("/schemas/protobuf/shape/upload", zipForm([{ name: "shape.proto", text: shape, deflate: true }, { name: "point.proto", text: point }]));
  expect([z.status, await z.text()]).toEqual([201, '{"type":"protobuf","name":"shape"}']);
  expect((await d.call("GET", "/schemas/protobuf")).text).toBe('["book","point","shape"]');
  const missing = await put("/schemas/protobuf/other/upload", zipForm([{ name: "shape.proto", text: shape }]));
  expect([missing.status, await missing.text()]).toEqual([400, JSON.stringify({ error: 1000, message: "Invalid schema: zip archive has no other.proto" })]);
  const unresolved = await put("/schemas/protobuf/lone/upload", zipForm([{ name: "lone.proto", text: shape.replace("point.proto", "gone.proto") }]));
  expect(JSON.parse(await unresolved.text()).message).toBe("Invalid schema: lone.proto: cannot find imported file gone.proto");
  expect((await d.call("GET", "/schemas/protobuf")).text).toBe('["book","point","shape"]');
  for (const n of ["shape", "point"]) expect((await d.call("DELETE", `/schemas/protobuf/${n}`)).status).toBe(200);
});

test("a protobuf stream needs a registered schema and message at CREATE; custom streams are refused", async () => {
  d = await startFloe(dir);
  const create = async (opts: string) => (await d!.call("POST", "/streams", { sql: `CREATE STREAM pb () WITH (DATASOURCE="pb/in", ${opts})` })).text;
  expect(await create('FORMAT="protobuf", SCHEMAID="nope.Book"')).toBe(errorOf("Stream command error: schema type protobuf id nope not found in registry", 3000));
  expect(await create('FORMAT="protobuf", SCHEMAID="book.Nope"')).toBe(errorOf("Stream command error: message type Nope not found in schema book", 3000));
  expect(await create('FORMAT="protobuf"')).toBe(errorOf("Stream command error: invalid schemaId: , expect <schemaName>.<MessageName>", 3000));
  expect(await create('FORMAT="custom", SCHEMAID="c.M"')).toBe(errorOf("Stream command error: custom formats are Go plugins (.so): floe does not load Go plugins", 3000));
  expect(await create('FORMAT="protobuf", SCHEMAID="book.Book"')).toBe("Stream pb is created.");
  // A sink's schemaId is checked when the rule is created.
  const rule = await d.call("POST", "/rules", { id: "badsink", sql: "SELECT * FROM pb", actions: [{ mqtt: { server: "tcp://127.0.0.1:1", topic: "x", format: "protobuf", schemaId: "book.Missing" } }] });
  expect(rule.status).toBe(400);
  expect(rule.text).toContain("message type Missing not found in schema book");
  const batched = await d.call("POST", "/rules", { id: "batched", sql: "SELECT * FROM pb", actions: [{ mqtt: { server: "tcp://127.0.0.1:1", topic: "x", format: "protobuf", schemaId: "book.Book", batchSize: 10 } }] });
  expect(batched.status).toBe(400);
  expect(batched.text).toContain("format protobuf cannot be batched: a payload is one message (remove batchSize and lingerInterval)");
  expect((await d.call("DELETE", "/streams/pb")).status).toBe(200);
  // A graph rule's source node names its schema as `schemaName` + `schemaMessage` (graph-rules.md §4).
  const graph = (msg: string) => ({
    id: `g${msg}`,
    graph: {
      nodes: {
        src: { type: "source", nodeType: "mqtt", props: { datasource: "pb/g", format: "protobuf", schemaName: "book", schemaMessage: msg } },
        out: { type: "sink", nodeType: "nop", props: {} },
      },
      topo: { sources: ["src"], edges: { src: ["out"] } },
    },
  });
  const bad = await d.call("POST", "/rules", graph("Nope"));
  expect(bad.status).toBe(400);
  expect(bad.text).toContain("message type Nope not found in schema book");
  expect((await d.call("POST", "/rules", graph("Book"))).status).toBe(201);
  expect((await d.call("DELETE", "/rules/gBook")).status).toBe(200);
});

test("a full import with stop=1 installs the document's schemas, then the daemon exits for a restart", async () => {
  const dir = tempHome();
  d = await startFloe(dir);
  expect((await d.call("POST", "/schemas/protobuf", { name: "book", content: BOOK })).status).toBe(201);
  const doc = JSON.parse((await d.call("GET", "/data/export")).text) as Record<string, Record<string, string>>;
  const bad = { ...doc, Schema: { protobuf_zz: JSON.stringify({ type: "protobuf", name: "zz", content: "message {" }) } };
  const failed = await d.call("POST", "/data/import?stop=1", { content: JSON.stringify(bad) });
  expect(failed.text).toBe(errorOf("schemaImport Schema import error map[protobuf_zz:zz.proto: illegal type name '{' (line 1)]"));
  const good = { ...doc, Schema: { protobuf_stopped: JSON.stringify({ type: "protobuf", name: "stopped", content: OUT, version: "7" }) } };
  expect((await d.call("POST", "/data/import?stop=1", { content: JSON.stringify(good) })).status).toBe(200);
  expect(await d.proc.exited).toBe(100);
  d = await startFloe(dir);
  expect((await d.call("GET", "/schemas/protobuf")).text).toBe('["stopped"]');
  expect(JSON.parse((await d.call("GET", "/schemas/protobuf/stopped")).text)).toMatchObject({ content: OUT, version: "7" });
});

test("schemas survive a restart and travel through export and import", async () => {
  d = await startFloe(dir);
  expect((await d.call("PUT", "/schemas/protobuf/book", { content: BOOK, version: "3" })).status).toBe(200);
  await d.stop();
  d = await startFloe(dir);
  expect((await d.call("GET", "/schemas/protobuf")).text).toBe('["book"]');
  expect(JSON.parse((await d.call("GET", "/schemas/protobuf/book")).text)).toMatchObject({ content: BOOK, version: "3" });

  const full = JSON.parse((await d.call("GET", "/data/export")).text) as { Schema: Record<string, string> };
  expect(full.Schema).toEqual({ protobuf_book: JSON.stringify({ type: "protobuf", name: "book", content: BOOK, version: "3" }) });
  expect((await d.call("GET", "/v2/data/export")).text).toContain("protobuf_book:");

  // A partial export carries the schemas its rules' streams and sinks name.
  expect((await d.call("POST", "/streams", { sql: 'CREATE STREAM pbx () WITH (DATASOURCE="pbx", FORMAT="protobuf", SCHEMAID="book.Book")' })).status).toBe(201);
  expect((await d.call("POST", "/rules", { id: "rx", sql: "SELECT * FROM pbx", actions: [{ nop: {} }] })).status).toBe(201);
  expect((await d.call("POST", "/rules", { id: "ry", sql: "SELECT 1 AS a FROM pbx", actions: [{ nop: {} }], triggered: false })).status).toBe(201);
  const part = JSON.parse((await d.call("POST", "/data/export", ["rx"])).text) as { Schema: Record<string, string> };
  expect(Object.keys(part.Schema)).toEqual(["protobuf_book"]);

  // A full import resets the registry; the document's schemas are installed only with stop=1 [quirk].
  const doc = { ...full, streams: {}, tables: {}, rules: {} };
  const imp = await d.call("POST", "/data/import", { content: JSON.stringify(doc) });
  expect(imp.status).toBe(200);
  expect((await d.call("GET", "/schemas/protobuf")).text).toBe("[]");
  // A partial import installs what is absent.
  expect((await d.call("POST", "/data/import?partial=1", { content: JSON.stringify(doc) })).status).toBe(200);
  expect(JSON.parse((await d.call("GET", "/schemas/protobuf/book")).text)).toMatchObject({ content: BOOK, version: "3" });
  // A schema that does not parse is a per-item error of a partial import.
  const broken = { ...doc, Schema: { protobuf_zz: JSON.stringify({ type: "protobuf", name: "zz", content: "message {" }) } };
  const bi = await d.call("POST", "/data/import?partial=1", { content: JSON.stringify(broken) });
  expect(bi.status).toBe(400);
  expect(bi.text).toContain("zz.proto: illegal type name");
  // v2 YAML import installs schemas too.
  expect((await d.call("DELETE", "/schemas/protobuf/book")).status).toBe(200);
  const yaml = `schema:\n    protobuf_book:\n        type: protobuf\n        name: book\n        content: ${JSON.stringify(BOOK)}\nstreams: {}\nrules: {}\n`;
  expect(await d.call("POST", "/v2/data/import", { content: yaml })).toMatchObject({ status: 200, text: "success" });
  expect(JSON.parse((await d.call("GET", "/schemas/protobuf/book")).text).content).toBe(BOOK);
});

test("schemas shipped in etc/schemas/protobuf are registered at start; a data file of the same name wins", async () => {
  const home = tempHome({ "schemas/protobuf/shipped.proto": OUT, "schemas/protobuf/both.proto": OUT });
  const both = BOOK;
  const dataDir = join(home, "data", "schemas", "protobuf");
  await Bun.write(join(dataDir, "both.proto"), both);
  d = await startFloe(home);
  expect((await d.call("GET", "/schemas/protobuf")).text).toBe('["both","shipped"]');
  expect(JSON.parse((await d.call("GET", "/schemas/protobuf/both")).text).content).toBe(both);
  expect((await d.call("POST", "/streams", { sql: 'CREATE STREAM sh () WITH (DATASOURCE="x", FORMAT="protobuf", SCHEMAID="shipped.Out")' })).status).toBe(201);
  expect((await d.call("DELETE", "/schemas/protobuf/shipped")).status).toBe(200);
  await d.stop();
  d = await startFloe(home);
  expect((await d.call("GET", "/schemas/protobuf")).text).toBe('["both"]');
});

// ------------------------------------------------------------------------------------------------
// end to end through a broker

let broker: Mosquitto;
let client: mqtt.MqttClient;
const received = new Map<string, Buffer[]>();

beforeAll(async () => {
  broker = await Mosquitto.start();
  client = await mqtt.connectAsync(broker.url.replace("tcp:", "mqtt:"));
  await client.subscribeAsync(["pb/out", "pb/json"], { qos: 1 });
  client.on("message", (t, p) => {
    const l = received.get(t) ?? [];
    l.push(p);
    received.set(t, l);
  });
});

afterAll(async () => {
  await client?.endAsync();
  await broker?.stop();
});

test("a rule decodes protobuf MQTT payloads and encodes protobuf and JSON; a bad payload is a counted decode error", async () => {
  d = await startFloe(dir);
  const call = d.call.bind(d);
  expect((await call("PUT", "/schemas/protobuf/book", { content: BOOK, version: "4" })).status).toBe(200);
  expect((await call("PUT", "/schemas/protobuf/out", { content: OUT })).status).toBe(200);
  expect((await call("PUT", "/metadata/sources/mqtt/confKeys/pb", { server: broker.url, qos: 1 })).status).toBe(200);
  expect((await call("PUT", "/streams/books", { sql: 'CREATE STREAM books () WITH (DATASOURCE="pb/in", FORMAT="protobuf", SCHEMAID="book.Book", CONF_KEY="pb")' })).status).toBe(200);
  const rule = {
    id: "pbrule",
    sql: "SELECT id, author->name AS who, id + 1 AS n, tags, kind, title FROM books",
    actions: [{ mqtt: { server: broker.url, topic: "pb/out", qos: 1, format: "protobuf", schemaId: "out.Out", sendSingle: true } }, { mqtt: { server: broker.url, topic: "pb/json", qos: 1, sendSingle: true } }],
  };
  const r = await call("POST", "/rules", rule);
  expect([r.status, r.text]).toEqual([201, "Rule pbrule was created successfully."]);

  const root = protobuf.parse(BOOK + OUT.replace('syntax = "proto3";\n', ""), { keepCase: true }).root;
  const Book = root.lookupType("Book");
  const Out = root.lookupType("Out");
  const payload = Book.encode({ id: "9007199254740993", title: "Dune", tags: ["sf", "classic"], author: { name: "Herbert", born: 1920 }, kind: 1 }).finish();

  // The rule subscribes asynchronously: publish until both sinks have a result.
  await waitFor(async () => {
    if (received.get("pb/out")?.length && received.get("pb/json")?.length) return true;
    await client.publishAsync("pb/in", Buffer.from(payload), { qos: 1 });
    return false;
  }, "both sinks' results", 10_000, 200);
  const out = received.get("pb/out")?.[0];
  expect(out).toBeDefined();
  const decoded = Out.toObject(Out.decode(out!), { longs: String });
  // int64 beyond 2^53 stays exact through decode, arithmetic and encode.
  expect(decoded).toEqual({ id: "9007199254740993", who: "Herbert", n: "9007199254740994" });
  expect(received.get("pb/json")![0]!.toString()).toBe('{"id":9007199254740993,"kind":1,"n":9007199254740994,"tags":["sf","classic"],"title":"Dune","who":"Herbert"}');

  // Garbage is one decode error on the decoder node; the rule keeps running and processing.
  await client.publishAsync("pb/in", Buffer.from([0xff, 0xff, 0xff]), { qos: 1 });
  const st = await waitForValue(async () => {
    const s = JSON.parse((await call("GET", "/rules/pbrule/status")).text) as Record<string, unknown>;
    return s.op_2_decoder_0_exceptions_total ? s : undefined;
  }, "the decode error on the decoder node", 5000, 50);
  expect(st.status).toBe("running");
  expect(st.op_2_decoder_0_exceptions_total).toBe(1);
  expect(String(st.op_2_decoder_0_last_exception)).toStartWith("fail to decode protobuf message Book: ");
  const before = received.get("pb/out")!.length;
  await client.publishAsync("pb/in", Buffer.from(Book.encode({ id: 5, author: { name: "X" } }).finish()), { qos: 1 });
  await waitFor(() => received.get("pb/out")!.length > before, "the next result", 5000, 50);
  expect(Out.toObject(Out.decode(received.get("pb/out")!.at(-1)!), { longs: String })).toEqual({ id: "5", who: "X", n: "6" });

  // The stream's schema comes from its message (rest-api.md §4 "With SCHEMAID").
  const schema = JSON.parse((await call("GET", "/streams/books/schema")).text) as Record<string, unknown>;
  expect(Object.keys(schema).sort()).toEqual(["author", "id", "kind", "tags", "title"]);
});
