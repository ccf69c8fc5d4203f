/** Sink data templates (rules-and-sinks.md §3.2): Go text/template over floe values. */
import { CompileBudgetError } from "../errors.ts";
import type { Value } from "../value/values.ts";
import type { Turn } from "../core/turn.ts";
import { Executor, type FuncCtx } from "./exec.ts";
import { TEMPLATE_FUNCS } from "./funcs.ts";
import { parseTemplate, TemplateError, type Node, type Operand, type Pipeline } from "./parse.ts";

export { TemplateError } from "./parse.ts";

/** A compiled template: parse once at rule start, render per record. */
export type CompiledTemplate = (data: Value) => string;

function checkFuncs(nodes: Node[], name: string, text: string): void {
  const pipe = (p: Pipeline): void => {
    for (const c of p.cmds) for (const a of c.args) operand(a);
  };
  const operand = (a: Operand): void => {
    if (a.k === "ident" && a.name !== "and" && a.name !== "or" && !TEMPLATE_FUNCS.has(a.name)) {
      const line = 1 + (text.slice(0, a.pos).match(/\n/g)?.length ?? 0);
      throw new TemplateError(`template: ${name}:${line}: function "${a.name}" not defined`);
    }
    if (a.k === "pipe") pipe(a.pipe);
    if (a.k === "chain") operand(a.node);
  };
  for (const n of nodes) {
    if (n.k === "action") pipe(n.pipe);
    else if (n.k === "if" || n.k === "with" || n.k === "range") {
      pipe(n.pipe);
      checkFuncs(n.list, name, text);
      if (n.elseList) checkFuncs(n.elseList, name, text);
    }
  }
}

/** Compiles `text`; throws TemplateError `template: sink:<line>: <message>` on bad syntax. */
export function compileTemplate(text: string, props: Readonly<Record<string, string>> = {}, name = "sink"): CompiledTemplate {
  const tmpl = parseTemplate(text, name);
  checkFuncs(tmpl.root, name, text);
  const ctx: FuncCtx = { props };
  const ex = new Executor(tmpl, TEMPLATE_FUNCS, ctx);
  return (data) => ex.run(data);
}

/** A template run in steps: `step` until it returns true, then `output` is what `run` returns. */
export interface TemplateSteps {
  /** Runs on until done (true), the turn is spent or about `cap` top-level range iterations ran. */
  step(turn: Turn, cap: number): boolean;
  readonly output: string;
}

/**
 * Compiles `text` for runs in steps (a whole window rendered across turns of the event loop):
 * each call begins a run over `data`. Null when the template has no top-level `range`, the only
 * place a run can pause.
 */
export function compileSteppedTemplate(text: string, name = "sink"): ((data: Value) => TemplateSteps) | null {
  const tmpl = parseTemplate(text, name);
  if (!tmpl.root.some((n) => n.k === "range")) return null;
  checkFuncs(tmpl.root, name, text);
  const ctx: FuncCtx = { props: {} };
  return (data) => {
    const ex = new Executor(tmpl, TEMPLATE_FUNCS, ctx);
    ex.begin(data);
    return ex;
  };
}

/** Whether a string property is a template (contains an action). */
export function isTemplate(s: string): boolean {
  return s.includes("{{");
}

/**
 * The compile budget of the templates in a sink's properties, when a rule is created: each string
 * holding an action is parsed, and one past a limit throws its CompileBudgetError. Other parse
 * errors stay the sink's to report when it starts.
 */
export function checkTemplateBudget(props: unknown): void {
  if (typeof props === "string") {
    if (!isTemplate(props)) return;
    try {
      parseTemplate(props);
    } catch (e) {
      if (e instanceof CompileBudgetError) throw e;
    }
  } else if (Array.isArray(props)) for (const v of props) checkTemplateBudget(v);
  else if (props !== null && typeof props === "object") for (const v of Object.values(props)) checkTemplateBudget(v);
}
