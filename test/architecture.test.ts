/**
 * The layering of ARCHITECTURE.md holds: every relative import in lib/, generated/ and cli.ts
 * (type-only ones included) goes to its own folder or to a folder on a lower floor, and no files
 * import each other in a cycle. What does not hold yet is listed below with the reason; a new upward
 * import, a new cycle, or an allowance that is no longer needed fails. lib/ holds sources only: the
 * files built from them live in generated/, each owned by the one lib/ folder that imports it. No
 * hand-written source file is longer than MAX_LINES, and test/'s folders mirror lib/'s.
 */
import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";

const ROOT = join(import.meta.dir, "..");

/**
 * Floors from the bottom. A module is a top-level folder of lib/ (or lib/errors.ts, or cli.ts). It
 * may import its own folder and any folder on a lower floor; folders sharing a floor are independent.
 */
const FLOORS: readonly (readonly string[])[] = [
  ["errors.ts", "log.ts", "log-file.ts"], // the one error hierarchy with eKuiper's codes; the logger and its rotating file
  ["value"], // Go values, time, zones, durations, JSON codecs
  ["sql"], // the language: AST, parser, rendering, walkers
  ["functions"], // the function registry and every built-in
  ["expr"], // AST -> closures
  ["core"], // the dataflow contract: item, operator, ring, bus, metrics, sink node
  ["plan"], // analyzer + planner: AST -> operator specs; rule options
  ["config", "store"], // settings from etc/; sqlite definitions, checkpoints, sink cache pages
  ["net", "formats", "template", "lookup"], // the outbound client and its guard, the inbound origin policy; codecs and the schema registry; Go text/template; the lookup-table contract and cache
  ["sink", "source", "ops"], // sink machinery (queue, cache, backlog, resend, encode); the source contract; every operator, windows inside
  ["connectors"], // one folder per technology (source, sink, lookup, conf, client) and the registries
  ["runtime", "cluster"], // run a rule: topology, inlet, shared sources, tracing; a floe group over NATS JetStream
  ["server", "pipe"], // the two hosts: the REST daemon (rule lifecycle, scheduler, cron), pipe mode
  ["cli"], // one file per subcommand
  ["cli.ts"], // the entry
];

/**
 * The built files of generated/ (committed, so a fresh clone runs with nothing built). Each belongs
 * to the floor of the lib/ folder that owns it, and only that folder may import it: the rest of the
 * code reaches it through that folder's modules (the parser through sql/parse.ts).
 */
const GENERATED: readonly { readonly file: string; readonly owner: string; readonly why: string }[] = [
  { file: "generated/sql/parser.js", owner: "sql", why: "the SQL parser, built by peggy from lib/sql/grammar/*.peggy (`make parser`)" },
  { file: "generated/console/app.js", owner: "server", why: "the web console's script, built from lib/server/console/ui/ (`make ui`); embedded as a file" },
];

/** Upward imports allowed, each with its reason and its way out (none today: keep it that way). */
const ALLOWED_UPWARD: readonly { readonly from: string; readonly to: string; readonly why: string }[] = [
];

/** Import cycles between files that exist today; each is one concept split over files, with its reason. */
const ALLOWED_CYCLES: readonly { readonly files: readonly string[]; readonly why: string }[] = [
  { files: ["lib/value/time.ts", "lib/value/values.ts"], why: "values format times; time formats values (%v): one value model in two files" },
  { files: ["lib/value/tzif.ts", "lib/value/zones.ts"], why: "zones load TZif data; TZif rules build zones" },
  { files: ["lib/functions/jsonpath/grammar.ts", "lib/functions/jsonpath/parse.ts"], why: "recursive-descent parser split over two files" },
  {
    files: ["lib/expr/compile-access.ts", "lib/expr/compile-call.ts", "lib/expr/compile-cond.ts", "lib/expr/compile.ts"],
    why: "the expression compiler recurses into sub-expressions from every part",
  },
];

/**
 * The longest a hand-written source file may be (lib/'s .ts, .peggy and .css files, cli.ts): a file
 * past it holds more than one concept, and is split by concept rather than allowed here.
 */
const MAX_LINES = 500;

/**
 * The folders of test/ that do not mirror a folder of lib/: what they test is not one folder's code.
 * Every other folder of test/ is the mirror of a folder of lib/ (STYLE.md: test/ mirrors lib/).
 */
const TEST_ONLY_FOLDERS: readonly { readonly folder: string; readonly why: string }[] = [
  { folder: "bench", why: "the benchmark harness (bench/ at the top, not lib/)" },
  { folder: "conformance", why: "the shared conformance vectors, run through the whole engine" },
  { folder: "helpers", why: "what tests share: brokers, daemons, runtimes, waits" },
  { folder: "hostile", why: "attacks of THREAT-MODEL.md, each across every surface it reaches" },
  { folder: "packaging", why: "the release packages (packaging/ at the top, not lib/)" },
];

// Static, type-only and dynamic imports, and the synchronous lazy loads (`require("./x.ts")` at first use, to keep start-up short).
const IMPORT = /^\s*(?:import|export)\b[^;]*?\bfrom\s*["']([^"']+)["']|^\s*import\s*["']([^"']+)["']|\bimport\(\s*["']([^"']+)["']\s*\)|\brequire\(\s*["']([^"']+)["']\s*\)/gm;

/** The code files under `dir` (declarations excluded), as repository paths. */
function filesUnder(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { recursive: true, encoding: "utf8" })
    .filter((f) => /\.(ts|js)$/.test(f) && !f.endsWith(".d.ts"))
    .map((f) => `${dir}/${f.split("\\").join("/")}`);
}

/** The hand-written source files whose length MAX_LINES bounds, as repository paths. */
function handWritten(): string[] {
  const lib = readdirSync(join(ROOT, "lib"), { recursive: true, encoding: "utf8" })
    .filter((f) => /\.(ts|peggy|css)$/.test(f) && !f.endsWith(".d.ts"))
    .map((f) => `lib/${f.split("\\").join("/")}`);
  return [...lib, "cli.ts"].sort();
}

/** Lines as `wc -l` counts them, plus a last line without its newline. */
function lineCount(file: string): number {
  const text = readFileSync(join(ROOT, file), "utf8");
  if (text === "") return 0;
  return text.split("\n").length - (text.endsWith("\n") ? 1 : 0);
}

function sources(): string[] {
  return [...filesUnder("lib"), ...filesUnder("generated"), "cli.ts"].sort();
}

/** The folders under `dir`, recursively, relative to it. */
/** The folders under `dir` that hold code (a test's screenshots or other output are no folder of it). */
function foldersUnder(dir: string): string[] {
  const files = readdirSync(join(ROOT, dir), { recursive: true, encoding: "utf8" }).map((f) => f.split("\\").join("/"));
  const code = new Set(files.filter((f) => /\.(ts|js|peggy|css)$/.test(f)).map((f) => f.slice(0, Math.max(0, f.lastIndexOf("/")))));
  return files.filter((f) => statSync(join(ROOT, dir, f)).isDirectory() && [...code].some((c) => c === f || c.startsWith(`${f}/`)));
}

/** Relative imports of each file, resolved to repository paths. */
function importGraph(): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of sources()) {
    const targets: string[] = [];
    for (const m of readFileSync(join(ROOT, file), "utf8").matchAll(IMPORT)) {
      const spec = m[1] ?? m[2] ?? m[3] ?? m[4]!;
      if (!spec.startsWith(".")) continue;
      targets.push(relative(ROOT, resolve(ROOT, dirname(file), spec)).split("\\").join("/"));
    }
    graph.set(file, targets);
  }
  return graph;
}

/** `lib/<folder>/…` -> the folder; `lib/errors.ts` and `cli.ts` are modules of their own; a generated file -> its owner. */
function moduleOf(path: string): string {
  if (path === "cli.ts") return path;
  if (path.startsWith("generated/")) return GENERATED.find((g) => g.file === path)?.owner ?? path;
  return path.split("/")[1]!;
}

function floorOf(module: string): number {
  return FLOORS.findIndex((f) => f.includes(module));
}

/** Strongly connected components with more than one file (Tarjan). */
function cycles(graph: Map<string, string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const out: string[][] = [];
  let next = 0;
  const visit = (v: string): void => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue;
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const comp: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      comp.push(w);
    } while (w !== v);
    if (comp.length > 1) out.push(comp.sort());
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return out;
}

describe("architecture", () => {
  const graph = importGraph();

  test("the scan sees the code base: every lib folder and the entry, with their imports", () => {
    const edges = [...graph.values()].reduce((n, t) => n + t.length, 0);
    expect(graph.has("cli.ts")).toBe(true);
    expect(graph.get("lib/sql/parse.ts")).toContain("lib/sql/function-signatures.ts");
    expect(edges).toBeGreaterThan(500);
  });

  test("every folder of lib/ has a floor in the layering table", () => {
    const modules = new Set([...graph.keys()].map(moduleOf));
    const missing = [...modules].filter((m) => floorOf(m) < 0);
    expect(missing).toEqual([]);
  });

  test("lib/ holds no built file: every .js file is in generated/, and every file there is listed with its owner", () => {
    expect(filesUnder("lib").filter((f) => f.endsWith(".js"))).toEqual([]);
    expect(filesUnder("generated").sort()).toEqual(GENERATED.map((g) => g.file).sort());
    expect(GENERATED.filter((g) => floorOf(g.owner) < 0).map((g) => g.file)).toEqual([]);
  });

  test("a generated file is imported only by the lib/ folder that owns it", () => {
    const strays: string[] = [];
    for (const [from, targets] of graph) {
      for (const to of targets) {
        if (!to.startsWith("generated/")) continue;
        const owner = GENERATED.find((g) => g.file === to)?.owner;
        if (owner === undefined || !from.startsWith(`lib/${owner}/`)) strays.push(`${from} -> ${to}`);
      }
    }
    expect(strays).toEqual([]);
    for (const g of GENERATED) expect([...graph].some(([from, targets]) => from.startsWith(`lib/${g.owner}/`) && targets.includes(g.file))).toBe(true);
  });

  test(`no hand-written source file (lib/ .ts, .peggy, .css; cli.ts) is longer than ${MAX_LINES} lines`, () => {
    const files = handWritten();
    expect(files).toContain("lib/sql/grammar/statements.peggy");
    expect(files).toContain("lib/server/console/ui/style.css");
    const long = files.map((f) => ({ f, n: lineCount(f) })).filter((x) => x.n > MAX_LINES).map((x) => `${x.f}: ${x.n} lines`);
    expect(long).toEqual([]);
  });

  test("test/ mirrors lib/: every folder of test/ is a folder of lib/, but for the listed cross-cutting ones", () => {
    const lib = new Set(foldersUnder("lib"));
    const tests = foldersUnder("test");
    const own = (f: string) => TEST_ONLY_FOLDERS.some((t) => f === t.folder || f.startsWith(`${t.folder}/`));
    expect(tests.filter((f) => !lib.has(f) && !own(f)).sort()).toEqual([]);
    // A listed folder exists, and is no folder of lib/ (it would mirror that one).
    expect(TEST_ONLY_FOLDERS.map((t) => t.folder).filter((f) => lib.has(f) || !tests.includes(f))).toEqual([]);
  });

  test("imports point down: no import reaches a higher floor or a sibling on the same floor", () => {
    const violations: string[] = [];
    for (const [from, targets] of graph) {
      const a = moduleOf(from);
      for (const to of targets) {
        const b = moduleOf(to);
        if (a === b || floorOf(b) < floorOf(a)) continue;
        if (ALLOWED_UPWARD.some((x) => x.from === from && x.to === to)) continue;
        violations.push(`${from} -> ${to} (${a} on floor ${floorOf(a)} imports ${b} on floor ${floorOf(b)})`);
      }
    }
    expect(violations).toEqual([]);
  });

  test("every allowed upward import still exists (remove the allowance once it is fixed)", () => {
    const stale = ALLOWED_UPWARD.filter((x) => !graph.get(x.from)?.includes(x.to)).map((x) => `${x.from} -> ${x.to}`);
    expect(stale).toEqual([]);
  });

  test("no files import each other in a cycle beyond the allowed ones, and each allowed cycle still exists", () => {
    const key = (files: readonly string[]) => [...files].sort().join(" ");
    const found = cycles(graph).map(key).sort();
    const allowed = ALLOWED_CYCLES.map((c) => key(c.files)).sort();
    expect(found).toEqual(allowed);
  });
});
