/**
 * Idle memory per rule, by kind of object: the daemon in this process (`startDaemon`, REST on a
 * free port), one shared httppush stream and N idle rules of bench/density.ts's set-up (`SELECT *
 * FROM s WHERE temp > 21.0` into a nop sink, or --varied), then, after full collections, the JS
 * heap growth (`bun:jsc` heapStats) per rule, split by object type (the types whose count grew by
 * at least half a rule's worth), and the process's anonymous memory growth per rule.
 *
 *   node_modules/.bin/bun bench/rule-heap.ts [--rules 1000] [--varied] [--top 30] [--snapshot PATH]
 *
 * `--snapshot` also compares two heap snapshots (Bun.generateHeapSnapshot), before and after the
 * rules: the growth per rule by class (instances and bytes), and of plain objects, arrays,
 * strings, closures and scopes by what holds them (`<kind> <holder class>.<property or variable>`). Loopback only; the daemon is stopped at the end.
 */
import { heapStats, memoryUsage } from "bun:jsc";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { startDaemon } from "../lib/server/daemon.ts";
import { tempHome } from "../test/server/daemon.ts";
import { memKb } from "./meter.ts";
import { sameRules, variedRules } from "./density.ts";

const { values: a } = parseArgs({ options: { rules: { type: "string", default: "1000" }, varied: { type: "boolean" }, top: { type: "string", default: "30" }, snapshot: { type: "string" } } });
const n = Number(a.rules);
const dir = tempHome();
const d = await startDaemon({
  etc: join(dir, "etc"),
  data: join(dir, "data"),
  env: { ...process.env, KUIPER__BASIC__RESTPORT: "0", KUIPER__BASIC__PORT: "0", KUIPER__SOURCE__HTTPSERVERPORT: "0", KUIPER__SOURCE__HTTPSERVERIP: "127.0.0.1", FLOE_SAFE_AFTER_CRASHES: "0" },
  version: "bench",
  out: () => {},
  logger: () => {},
});

async function call(method: string, path: string, body?: object): Promise<{ status: number; text: string }> {
  const r = await fetch(`http://127.0.0.1:${d.restPort}${path}`, { method, body: body === undefined ? undefined : JSON.stringify(body), headers: { "content-type": "application/json" } });
  return { status: r.status, text: await r.text() };
}

/** Heap size and object counts by type after full collections. */
async function census(): Promise<{ heap: number; capacity: number; extra: number; malloc: number; objects: number; types: Record<string, number>; anon: number }> {
  for (let i = 0; i < 3; i++) {
    Bun.gc(true);
    await Bun.sleep(50);
  }
  const s = heapStats();
  return { heap: s.heapSize, capacity: s.heapCapacity, extra: s.extraMemorySize, malloc: memoryUsage().current, objects: s.objectCount, types: { ...s.objectTypeCounts }, anon: memKb(process.pid).anon };
}

/**
 * A heap snapshot's objects by class: [count, bytes]; and its closures by their holder and the
 * edge name they are held under (JSC's Inspector snapshot: nodes of 4 fields, edges of 4).
 */
/** The kinds of object the census attributes to what holds them. */
const HELD = new Set(["Function", "Object", "Array", "string", "JSLexicalEnvironment", "Map", "Set", "Promise", "Cell Butterfly", "PropertyTable", "Structure"]);

function snapshotCensus(): { classes: Map<string, [number, number]>; closures: Map<string, [number, number]>; functions: Map<string, [number, number]> } {
  Bun.gc(true);
  const s = Bun.generateHeapSnapshot() as unknown as { nodes: number[]; nodeClassNames: string[]; edges: number[]; edgeTypes: string[]; edgeNames: string[] };
  const classes = new Map<string, [number, number]>();
  const byId = new Map<number, number>();
  const add = (m: Map<string, [number, number]>, k: string, size: number) => {
    const e = m.get(k);
    if (e) {
      e[0]++;
      e[1] += size;
    } else m.set(k, [1, size]);
  };
  for (let i = 0; i < s.nodes.length; i += 4) {
    byId.set(s.nodes[i]!, i);
    add(classes, s.nodeClassNames[s.nodes[i + 2]!]!, s.nodes[i + 1]!);
  }
  // Each plain object, array, string, closure or scope is put down to the nearest object of a
  // class of its own above it (by the first edge that reaches it), and the property it hangs from.
  const parent = new Map<number, [number, string]>();
  for (let i = 0; i < s.edges.length; i += 4) {
    const to = byId.get(s.edges[i + 1]!);
    const from = byId.get(s.edges[i]!);
    if (to === undefined || from === undefined || parent.has(to)) continue;
    const type = s.edgeTypes[s.edges[i + 2]!];
    parent.set(to, [from, type === "Index" ? "[]" : type === "Internal" ? "(internal)" : s.edgeNames[s.edges[i + 3]!]!]);
  }
  const closures = new Map<string, [number, number]>();
  for (let i = 0; i < s.nodes.length; i += 4) {
    if (!HELD.has(s.nodeClassNames[s.nodes[i + 2]!]!)) continue;
    let at = i;
    let edge = "";
    for (let depth = 0; depth < 12; depth++) {
      const p = parent.get(at);
      if (p === undefined) break;
      at = p[0];
      edge = p[1];
      if (!HELD.has(s.nodeClassNames[s.nodes[at + 2]!]!)) break;
    }
    add(closures, `${s.nodeClassNames[s.nodes[at + 2]!]}.${edge}`, s.nodes[i + 1]!);
  }
  // Closures by what holds them directly (`<holder class>.<property or variable>`).
  const functions = new Map<string, [number, number]>();
  for (const [to, [from, edge]] of parent) if (s.nodeClassNames[s.nodes[to + 2]!] === "Function") add(functions, `${s.nodeClassNames[s.nodes[from + 2]!]}.${edge}`, s.nodes[to + 1]!);
  return { classes, closures, functions };
}

try {
  const st = await call("POST", "/streams", { sql: 'CREATE STREAM s () WITH (TYPE="httppush", DATASOURCE="/density", FORMAT="json", SHARED="true")' });
  if (st.status !== 201) throw new Error(`stream: ${st.status} ${st.text}`);
  // One rule first, so that what is made once (modules, the shared stream) is not counted per rule.
  const rules = a.varied ? variedRules(n + 1) : sameRules(n + 1);
  const create = async (i: number) => {
    const r = await call("POST", "/rules", { id: `r${i}`, sql: rules[i]!.sql, actions: [{ nop: {} }] });
    if (r.status !== 201) throw new Error(`rule r${i}: ${r.status} ${r.text}`);
  };
  await create(0);
  const before = await census();
  const s0 = a.snapshot ? snapshotCensus() : undefined;
  for (let i = 1; i <= n; i++) await create(i);
  await Bun.sleep(500);
  const after = await census();
  const per = (x: number) => Math.round((x / n) * 10) / 10;
  const grew: [string, number][] = [];
  for (const [k, v] of Object.entries(after.types)) {
    const g = v - (before.types[k] ?? 0);
    if (g >= n / 2) grew.push([k, per(g)]);
  }
  grew.sort((x, y) => y[1] - x[1]);
  console.log(
    JSON.stringify({
      rules: n,
      varied: !!a.varied,
      heapBytesPerRule: Math.round((after.heap - before.heap) / n),
      heapCapacityPerRule: Math.round((after.capacity - before.capacity) / n),
      extraMemoryPerRule: Math.round((after.extra - before.extra) / n),
      mallocPerRule: Math.round((after.malloc - before.malloc) / n),
      objectsPerRule: per(after.objects - before.objects),
      anonKiBPerRule: per(after.anon - before.anon),
      byType: Object.fromEntries(grew.slice(0, Number(a.top))),
    }, null, 1),
  );
  if (a.snapshot) {
    const per1 = (m: Map<string, [number, number]>, m0: Map<string, [number, number]>) =>
      [...m]
        .map(([k, [c, b]]) => [k, per(c - (m0.get(k)?.[0] ?? 0)), per(b - (m0.get(k)?.[1] ?? 0))] as const)
        .filter(([, c]) => c >= 0.5)
        .sort((x, y) => y[2] - x[2])
        .slice(0, Number(a.top));
    const s1 = snapshotCensus();
    const show = (title: string, rows: readonly (readonly [string, number, number])[]) => console.log(`${title} (per rule: count, bytes)\n` + rows.map(([k, c, b]) => `  ${k} ${c} ${b}`).join("\n"));
    show("by class", per1(s1.classes, s0!.classes));
    show("plain objects, arrays, strings, closures and scopes by the nearest class above them (class.property)", per1(s1.closures, s0!.closures));
    show("closures by what holds them (class.property)", per1(s1.functions, s0!.functions));
  }
} finally {
  await d.stop();
}
