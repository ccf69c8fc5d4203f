/**
 * The sink `transform` step (rules-and-sinks.md §3.1–§3.3): a result becomes the data a sink
 * sends — the list of rows (or one row per output with `sendSingle`), an error as
 * `{"error": …}`, empty results dropped with `omitIfEmpty`; then `dataTemplate`, then
 * `dataField` / `fields` / `excludeFields`. Templated sink properties are rendered here too.
 */
import { RowError } from "../errors.ts";
import { fmtV, isObj, type Obj, type Value } from "../value/values.ts";
import { Emission, type Item } from "../core/item.ts";
import { parseGoJson } from "../value/go-json.ts";
import { compileSteppedTemplate, compileTemplate, isTemplate, type CompiledTemplate, type TemplateSteps } from "../template/index.ts";
import type { SinkCommon } from "./common.ts";

/** One transformed output: data to encode, or (after a template) text sent as is. */
export class Output {
  data: Value;
  /** Template text to send verbatim (bytes sinks with json format), else null. */
  text: string | null;
  props: Record<string, unknown> | null;
  rows: number;
  /** `data` (a whole window) still has to go through the dataTemplate: the pipeline renders it in steps. */
  pendingTemplate: boolean;
  constructor(data: Value, text: string | null, props: Record<string, unknown> | null, rows: number, pendingTemplate = false) {
    this.data = data;
    this.text = text;
    this.props = props;
    this.rows = rows;
    this.pendingTemplate = pendingTemplate;
  }
}

type Renderer = (data: Value) => unknown;

/**
 * Compiles every string property holding `{{…}}`, at any depth; null when none does. The
 * `dataTemplate` itself is the data's template (applied once, by the transform), not a property
 * to render per item: it stays as written.
 */
function dynamicProps(props: Record<string, unknown>): Renderer | null {
  let any = false;
  const build = (v: unknown, top = false): Renderer => {
    if (typeof v === "string" && isTemplate(v)) {
      any = true;
      const t = compileTemplate(v);
      return (d) => t(d);
    }
    if (Array.isArray(v)) {
      const parts = v.map((x) => build(x));
      return (d) => parts.map((p) => p(d));
    }
    if (v && typeof v === "object") {
      const parts = Object.entries(v).map(([k, x]) => [k, top && k === "dataTemplate" ? () => x : build(x)] as const);
      return (d) => Object.fromEntries(parts.map(([k, p]) => [k, p(d)]));
    }
    return () => v;
  };
  const r = build(props, true);
  return any ? r : null;
}

function isEmpty(d: Value): boolean {
  if (d === null) return true;
  if (Array.isArray(d)) return d.length === 0;
  return isObj(d) && Object.keys(d).length === 0;
}

export class Transformer {
  private readonly template: CompiledTemplate | null;
  /** Runs of the template in steps, for arrays of more than `stepOver` rows sent as is; else null. */
  private readonly stepped: ((data: Value) => TemplateSteps) | null;
  private readonly dyn: Renderer | null;
  private readonly select: boolean;
  /**
   * `sendSingle` with nothing that can fail on a row (no dataTemplate, no field selection, no
   * templated property): the outputs of a result's rows can be made one by one, later (`single`).
   */
  readonly plainSingle: boolean;

  constructor(
    private readonly c: SinkCommon,
    /** Bytes sink with json format: template text is the payload as is. */
    private readonly rawText: boolean,
    props: Record<string, unknown>,
    /** A whole array of more rows than this is left to the pipeline to render in steps (`pendingTemplate`). */
    private readonly stepOver = Infinity,
  ) {
    this.template = c.dataTemplate ? compileTemplate(c.dataTemplate) : null;
    this.dyn = dynamicProps(props);
    this.select = !!(c.dataField || c.fields || c.excludeFields);
    this.plainSingle = !!c.sendSingle && !this.template && !this.dyn && !this.select;
    const steps = c.dataTemplate && rawText && !this.select && !c.sendSingle && stepOver !== Infinity;
    this.stepped = steps ? compileSteppedTemplate(c.dataTemplate!) : null;
  }

  /** Whether some property is templated (rendered per output into `Output.props`). */
  get templatedProps(): boolean {
    return this.dyn !== null;
  }

  /** Begins rendering a `pendingTemplate` output in steps. */
  beginTemplate(o: Output): TemplateSteps {
    return this.stepped!(o.data);
  }

  /** The RowError of a template that failed on `data` (counted on the transform node). */
  templateError(data: Value, e: unknown): RowError {
    return new RowError(`fail to encode data ${fmtV(data)} with dataTemplate for error ${(e as Error).message}`);
  }

  /** The output `apply` reuses (`reuse`); its row is let go of by `released`. */
  private readonly own = new Output(null, null, null, 1);

  /**
   * Appends the outputs of `item` to `out`; throws RowError (counted on the transform node).
   * `reuse`: the caller keeps no output past its push, so a one-row result's output under
   * `plainSingle` is this transform's own (an output per message was garbage on the common path).
   */
  apply(item: Item, out: Output[], reuse = false): void {
    let data: Value;
    let rows = 1;
    if (item instanceof Emission) {
      // A one-row emission sent singly needs no list (Emission.one).
      const row = item.row;
      if (row !== null && this.c.sendSingle) {
        if (this.c.omitIfEmpty && isEmpty(row)) return;
        if (reuse && this.plainSingle) {
          this.own.data = row;
          out.push(this.own);
        } else this.one(row, 1, out);
        return;
      }
      data = item.rows;
      rows = data.length;
    } else if (item instanceof RowError) data = { error: item.message };
    else return;
    const c = this.c;
    if (c.sendSingle && Array.isArray(data)) {
      for (const r of data) this.rowOutputs(r as Obj, out);
      return;
    }
    if (c.omitIfEmpty && isEmpty(data)) return;
    this.one(data, rows, out);
  }

  /** The push that `apply` reused the own output in is done: the row is not kept. */
  released(): void {
    this.own.data = null;
  }

  /** Appends the outputs of one row of a result sent singly; throws RowError (a template, a selection). */
  rowOutputs(row: Obj, out: Output[]): void {
    if (!(this.c.omitIfEmpty && isEmpty(row))) this.one(row, 1, out);
  }

  /** The output of one row of a result sent singly under `plainSingle`; null when omitted as empty. */
  single(row: Obj): Output | null {
    return this.c.omitIfEmpty && isEmpty(row) ? null : new Output(row, null, null, 1);
  }

  private one(data: Value, rows: number, out: Output[]): void {
    const props = this.dyn ? (this.dyn(data) as Record<string, unknown>) : null;
    if (this.template) {
      if (this.stepped && Array.isArray(data) && data.length > this.stepOver) {
        out.push(new Output(data, null, props, rows, true));
        return;
      }
      let text: string;
      try {
        text = this.template(data);
      } catch (e) {
        throw this.templateError(data, e);
      }
      if (this.select) {
        let parsed: Value;
        try {
          parsed = parseGoJson(text);
        } catch (e) {
          throw new RowError(`fail to TransItem data ${fmtV(data)} for error fail to decode data ${text} for error ${(e as RowError).message}`);
        }
        const sel = this.selectData(parsed);
        if (sel !== undefined) out.push(new Output(sel, null, props, rows));
        return;
      }
      if (this.rawText) {
        out.push(new Output(null, text, props, rows));
        return;
      }
      let parsed: Value;
      try {
        parsed = parseGoJson(text);
      } catch (e) {
        throw new RowError(`fail to decode data ${text} after applying dataTemplate for error ${(e as RowError).message}`);
      }
      out.push(new Output(parsed, null, props, rows));
      return;
    }
    if (this.select) {
      const sel = this.selectData(data);
      if (sel !== undefined) out.push(new Output(sel, null, props, rows));
      return;
    }
    out.push(new Output(data, null, props, rows));
  }

  /** §3.3; undefined = nothing to send (dataField of an empty list). */
  private selectData(d: Value): Value | undefined {
    const c = this.c;
    if (c.dataField) {
      if (isObj(d)) d = d[c.dataField] ?? null;
      else if (Array.isArray(d)) {
        if (d.length === 0) return undefined;
        const first = d[0]!;
        d = isObj(first) ? (first[c.dataField] ?? null) : null;
      } else throw new RowError(`fail to decode data ${fmtV(d)}`);
    }
    if (c.fields) {
      const pick = (o: Value): Obj => {
        if (!isObj(o)) throw new RowError(`unsupported type ${fmtV(o)}`);
        const r: Obj = {};
        for (const f of c.fields!) r[f] = o[f] ?? null;
        return r;
      };
      if (Array.isArray(d)) return d.map(pick);
      return pick(d);
    }
    if (c.excludeFields) {
      const drop = (o: Value): Value => {
        if (!isObj(o)) return o;
        const r: Obj = { ...o };
        for (const f of c.excludeFields!) delete r[f];
        return r;
      };
      if (Array.isArray(d)) return d.map(drop);
      return drop(d);
    }
    return d;
  }
}
