/**
 * Slow-to-compile definitions, one per kind of thing floe compiles from what a user uploads:
 * protobuf schemas (as JSON `content` and as a multipart file), SQL, graph rule JSON, templates and
 * UDF source. Shared by the hostile suite (test/hostile/compile.test.ts) and bench/compile-budget.ts.
 */

export type CompileKind = "protobuf" | "sql" | "graph" | "template" | "udf";

export interface HostileDefinition {
  readonly name: string;
  readonly kind: CompileKind;
  readonly method: string;
  readonly path: string;
  readonly headers: Record<string, string>;
  readonly body: () => NonNullable<RequestInit["body"]>;
}

/** A proto3 file with one message `W` of `n` int64 fields. */
export function wideProto(n: number): string {
  const parts: string[] = ['syntax = "proto3";\nmessage W {\n'];
  for (let i = 1; i <= n; i++) parts.push(`  int64 field_${i} = ${i};\n`);
  parts.push("}\n");
  return parts.join("");
}

/** A multipart body with `text` as the form's `file` field (`<name>.proto`). */
export function protoForm(name: string, text: string): FormData {
  const f = new FormData();
  f.append("file", new Blob([text]), `${name}.proto`);
  return f;
}

const JSON_HEADERS = { "Content-Type": "application/json" };
const json = (v: unknown) => () => JSON.stringify(v);

/** `a + (a + (… a …))` nested `depth` deep: within the statement length limit, far past any real expression. */
export function deepSql(depth: number): string {
  return `SELECT ${"a + (".repeat(depth)}a${")".repeat(depth)} AS x FROM hostile_s`;
}

/** A graph rule of `n` filter nodes chained from one memory source to one nop sink. */
export function hugeGraph(n: number): Record<string, unknown> {
  const nodes: Record<string, unknown> = { src: { type: "source", nodeType: "memory", props: { datasource: "hostile", format: "json" } } };
  const edges: Record<string, string[]> = { src: ["f0"] };
  for (let i = 0; i < n; i++) {
    nodes[`f${i}`] = { type: "operator", nodeType: "filter", props: { expr: "a > 0" } };
    edges[`f${i}`] = [i + 1 < n ? `f${i + 1}` : "out"];
  }
  nodes.out = { type: "sink", nodeType: "nop", props: {} };
  return { nodes, topo: { sources: ["src"], edges } };
}

/** `{{if .a}}` nested `depth` deep. */
export function deepTemplate(depth: number): string {
  return `${"{{if .a}}".repeat(depth)}x${"{{end}}".repeat(depth)}`;
}

/** A UDF whose source is `bytes` long: one function returning a huge array literal. */
export function giantUdf(id: string, bytes: number): string {
  const n = Math.floor((bytes - 60) / 2);
  return `function ${id}() { return [${"1,".repeat(n)}]; }`;
}

/** Every kind's hostile definition, aimed at the route that takes it. */
export function hostileDefinitions(): HostileDefinition[] {
  const w8k = wideProto(8000);
  const w300k = wideProto(300_000);
  return [
    { name: "protobuf 8,000 fields as JSON content", kind: "protobuf", method: "POST", path: "/schemas/protobuf", headers: JSON_HEADERS, body: json({ name: "w8k", content: w8k }) },
    { name: "protobuf 8,000 fields as a multipart file", kind: "protobuf", method: "PUT", path: "/schemas/protobuf/w8km/upload", headers: {}, body: () => protoForm("w8km", w8k) },
    { name: "protobuf 300,000 fields as a multipart file", kind: "protobuf", method: "PUT", path: "/schemas/protobuf/w300k/upload", headers: {}, body: () => protoForm("w300k", w300k) },
    { name: "protobuf 300,000 fields as JSON content", kind: "protobuf", method: "POST", path: "/schemas/protobuf", headers: JSON_HEADERS, body: json({ name: "w300kj", content: w300k }) },
    { name: "SQL expression nested 5,000 deep", kind: "sql", method: "POST", path: "/rules", headers: JSON_HEADERS, body: json({ id: "hostile_sql", sql: deepSql(5000), actions: [{ nop: {} }] }) },
    { name: "graph rule of 2,000 nodes", kind: "graph", method: "POST", path: "/rules", headers: JSON_HEADERS, body: json({ id: "hostile_graph", graph: hugeGraph(2000) }) },
    { name: "dataTemplate nested 3,000 deep", kind: "template", method: "POST", path: "/rules", headers: JSON_HEADERS, body: json({ id: "hostile_tpl", sql: "SELECT * FROM hostile_s", actions: [{ nop: { dataTemplate: deepTemplate(3000) } }] }) },
    { name: "UDF source of 250 KiB", kind: "udf", method: "POST", path: "/udf/javascript", headers: JSON_HEADERS, body: json({ id: "hostile_udf", script: giantUdf("hostile_udf", 250 * 1024) }) },
  ];
}
