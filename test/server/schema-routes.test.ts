/**
 * eKuiper 2.x's schema answers and path-name checks on a real `floe serve`: a rule's output
 * schema (`{"hasIndex":true,"index":n}` per field), a declared stream's schema (index 0 for every
 * field, keys in Go map order), a shared schemaless stream's schema (the union of the fields its
 * rules read), and the name validation of the plugin, service and JavaScript UDF paths.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startFloe, type DaemonProc } from "./daemon.ts";

let d: DaemonProc;

beforeAll(async () => {
  d = await startFloe();
  for (const sql of [
    'CREATE STREAM typed (id bigint, name string, pos struct(x float, a bigint), tags array(string)) WITH (TYPE="memory", DATASOURCE="sr/typed")',
    'CREATE STREAM shared () WITH (TYPE="memory", DATASOURCE="sr/shared", SHARED="true")',
    'CREATE STREAM loose () WITH (TYPE="memory", DATASOURCE="sr/loose")',
  ])
    expect((await d.call("POST", "/streams", { sql })).status).toBe(201);
});

afterAll(async () => {
  await d?.stop();
});

const rule = (id: string, sql: string, options?: object) => d.call("POST", "/rules", { id, sql, actions: [{ nop: {} }], ...(options ? { options } : {}) });

test("a rule's schema: each visible field {hasIndex,index} in select order, no type even for a declared column", async () => {
  expect((await rule("rs1", "SELECT id, name AS who, pos->x AS px FROM typed")).status).toBe(201);
  expect(await d.call("GET", "/rules/rs1/schema")).toMatchObject({
    status: 200,
    text: '{"id":{"hasIndex":true,"index":0},"px":{"hasIndex":true,"index":2},"who":{"hasIndex":true,"index":1}}',
  });
  expect((await rule("rs2", "SELECT * FROM typed")).status).toBe(201);
  expect(JSON.parse((await d.call("GET", "/rules/rs2/schema")).text)).toEqual({
    id: { hasIndex: true, index: 0 },
    name: { hasIndex: true, index: 1 },
    pos: { hasIndex: true, index: 2 },
    tags: { hasIndex: true, index: 3 },
  });
  expect((await d.call("GET", "/rules/nope/schema")).status).toBe(404);
});

test("a declared stream's schema: index 0 for every field, nested ones too, keys sorted", async () => {
  expect(await d.call("GET", "/streams/typed/schema")).toMatchObject({
    status: 200,
    text:
      '{"id":{"type":"bigint","index":0},"name":{"type":"string","index":0},' +
      '"pos":{"type":"struct","properties":{"a":{"type":"bigint","index":0},"x":{"type":"float","index":0}},"index":0},' +
      '"tags":{"type":"array","items":{"type":"string","index":0},"index":0}}',
  });
});

test("a shared schemaless stream's schema is the union of the fields its rules read, kept until the rule is deleted", async () => {
  expect((await d.call("GET", "/streams/shared/schema")).text).toBe("null");
  expect((await rule("sh1", "SELECT id FROM shared")).status).toBe(201);
  expect((await d.call("GET", "/streams/shared/schema")).text).toBe('{"id":null}');
  expect((await rule("sh2", "SELECT name FROM shared WHERE id > 1", undefined)).status).toBe(201);
  expect((await d.call("GET", "/streams/shared/schema")).text).toBe('{"id":null,"name":null}');
  // A stopped rule still holds its fields; deleting it takes away what only it read.
  expect((await d.call("POST", "/rules/sh2/stop")).status).toBe(200);
  expect((await d.call("GET", "/streams/shared/schema")).text).toBe('{"id":null,"name":null}');
  expect((await d.call("DELETE", "/rules/sh2")).status).toBe(200);
  expect((await d.call("GET", "/streams/shared/schema")).text).toBe('{"id":null}');

  // With slice tuples each field has its index in the merged row.
  expect((await rule("sh3", "SELECT temp, name FROM shared", { experiment: { useSliceTuple: true } })).status).toBe(201);
  expect((await d.call("GET", "/streams/shared/schema")).text).toBe(
    '{"id":{"hasIndex":true,"index":0},"name":{"hasIndex":true,"index":1},"temp":{"hasIndex":true,"index":2}}',
  );
  for (const id of ["sh1", "sh3"]) expect((await d.call("DELETE", `/rules/${id}`)).status).toBe(200);
  expect((await d.call("GET", "/streams/shared/schema")).text).toBe("null");

  // A schemaless stream that is not shared has no merged schema.
  expect((await rule("lo1", "SELECT id FROM loose")).status).toBe(201);
  expect((await d.call("GET", "/streams/loose/schema")).text).toBe("null");
});

test("plugin, service and JavaScript UDF paths validate the name before anything else", async () => {
  const bad = (x: string) => `{"error":1000,"message":"id '${x}' contains invalid characters: only alphanumeric, hyphens and underscores are allowed"}\n`;
  for (const path of ["/services/a.b", "/plugins/sources/a.b", "/plugins/sinks/a.b", "/plugins/functions/a.b", "/plugins/portables/a.b", "/udf/javascript/a.b"])
    for (const method of ["GET", "PUT", "DELETE"]) expect({ path, method, ...(await d.call(method, path, method === "PUT" ? {} : undefined)) }).toMatchObject({ path, method, status: 400, text: bad("a.b") });
  expect(await d.call("GET", "/plugins/udfs/a.b")).toMatchObject({ status: 400, text: bad("a.b") });
  // A valid name goes on to the route's own answer.
  expect(await d.call("GET", "/services/ab")).toMatchObject({ status: 404, text: '{"error":1002,"message":"describe service ab error: not found"}\n' });
  expect(await d.call("GET", "/udf/javascript/ab")).toMatchObject({ status: 404 });
});
