import { expect, test } from "bun:test";
import { compileSteppedTemplate, compileTemplate } from "../../lib/template/index.ts";
import type { Value } from "../../lib/value/values.ts";
import { Turn } from "../../lib/core/turn.ts";
import cases from "../../fixtures/templates/sink-templates.json";

interface Case {
  name: string;
  tmpl: string;
  data: unknown;
  want?: string;
  err?: string;
}

/** The case's text, or its exact error. */
function expectCase(c: Case, render: () => string): void {
  let out: string | undefined;
  let err: string | undefined;
  try {
    out = render();
  } catch (e) {
    err = (e as Error).message;
  }
  if (c.err !== undefined) expect(err).toBe(c.err);
  else {
    expect(err).toBeUndefined();
    expect(out).toBe(c.want!);
  }
}

test.each((cases as Case[]).map((c) => [c.name, c] as const))("%s", (_name, c) => {
  expectCase(c, () => compileTemplate(c.tmpl)(c.data as Value));
});

/** A run in steps pausing after every chunk of its top-level range: the same text, or the same error. */
function stepped(tmpl: string, data: Value): string {
  const begin = compileSteppedTemplate(tmpl);
  if (begin === null) return compileTemplate(tmpl)(data);
  const run = begin(data);
  let steps = 0;
  // A turn that never runs out of time, capped at one chunk: the run pauses after every chunk.
  const turn = new Turn(3_600_000);
  while (!run.step(turn, 1)) steps++;
  if (Array.isArray(data) && data.length > 64 && tmpl.startsWith("{{range")) expect(steps).toBeGreaterThan(0);
  return run.output;
}

test.each((cases as Case[]).map((c) => [c.name, c] as const))("in steps: %s", (_name, c) => {
  expectCase(c, () => stepped(c.tmpl, c.data as Value));
});

const rows = Array.from({ length: 1000 }, (_, i) => ({ i: BigInt(i), s: `<${i}>`, x: { y: BigInt(i % 3) } })) as Value;
test.each([
  ["index, if, json", `{{range $i, $r := .}}{{if $i}},{{end}}{"i":{{$r.i}},"s":{{json $r.s}}}{{end}}`],
  ["text and variables around the range", `{{$n := len .}}[{{range .}}{{.i}}:{{$n}} {{end}}]{{$n}}`],
  ["break and continue", `{{range $i, $r := .}}{{if eq $r.x.y 1}}{{continue}}{{end}}{{if gt $i 900}}{{break}}{{end}}{{$i}};{{end}}done`],
  ["two top-level ranges and a nested one", `{{range .}}{{.i}}{{range $k, $v := .x}}{{$k}}={{$v}}{{end}}{{end}}|{{range $}}{{.s}}{{else}}none{{end}}`],
  ["root variable inside", `{{range .}}{{len $}}{{end}}`],
])("a stepped run pausing every few iterations renders what one run does: %s", (_n, tmpl) => {
  expect(stepped(tmpl, rows)).toBe(compileTemplate(tmpl)(rows));
});

test("a stepped run fails where one run fails, with the same error", () => {
  const bad = Array.from({ length: 500 }, (_, i) => ({ x: i === 300 ? "str" : { y: i } })) as Value;
  const tmpl = "{{range .}}{{.x.y}},{{end}}";
  expect(() => compileTemplate(tmpl)(bad)).toThrow("can't evaluate field y in type string");
  expect(() => stepped(tmpl, bad)).toThrow("template: sink:1:13: executing \"sink\" at <.x.y>: can't evaluate field y in type string");
});

test("a template without a top-level range is not run in steps", () => {
  expect(compileSteppedTemplate("{{json .}}")).toBeNull();
  expect(compileSteppedTemplate("{{if .}}{{range .}}{{.}}{{end}}{{end}}")).toBeNull();
});
