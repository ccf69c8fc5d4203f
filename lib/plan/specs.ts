/**
 * The physical plan as data: one spec per operator, with eKuiper's node name and the compiled
 * closures it runs. The runtime turns specs into operators (runtime/topology.ts).
 */
import type { Evaluator } from "../expr/compile.ts";
import type { HitState } from "../expr/hits.ts";
import type { Zone } from "../value/time.ts";
import type { CallCtx, FuncDef } from "../functions/registry.ts";
import type { Expr, FieldType, JoinType, StreamField } from "../sql/ast.ts";
import type { StreamDef } from "./streams.ts";
import type { IncSpec, WindowSpec } from "./window-spec.ts";

export interface PreprocessorSpec {
  /** Declared fields to validate (STRICT_VALIDATION), or null. */
  readonly strict: StreamField[] | null;
  /** Event-time field name, or undefined in processing time. */
  readonly timestampField?: string;
  readonly timestampFormat?: string;
  readonly zone: Zone;
}

export interface ProjectField {
  /** Output key. */
  readonly name: string;
  readonly eval: Evaluator;
  readonly invisible: boolean;
  /** Unaliased multi-column function (changed_cols): its object's keys become columns. */
  readonly multi: boolean;
  /** eKuiper's error context for this field: `alias: a expr: <e>` or `expr: <e>`. */
  readonly errorContext: string;
}

export interface ProjectSpec {
  /** `*` / `s.*` present: stream (undefined = all) and EXCEPT names. */
  readonly wildcard?: { stream: string | undefined; except: ReadonlySet<string> };
  /** Plain column fields: output name, column name, stream. */
  readonly columns: { name: string; column: string; stream: string | undefined }[];
  /** Unaliased expression fields, in field order. */
  readonly exprs: ProjectField[];
  /** Aliased fields (and REPLACE items), in evaluation order. */
  readonly aliases: ProjectField[];
  /** Aggregate query: project per group (sql §11). */
  readonly aggregate: boolean;
  readonly sendNil: boolean;
  readonly sendMeta: boolean;
  /** `basic.ignoreCase`: plain columns match case-insensitively. */
  readonly ignoreCase: boolean;
  /** undefined or negative = no limit. */
  readonly limit?: number;
}

export interface SortKey {
  readonly eval: Evaluator;
  readonly ascending: boolean;
}

export interface AnalyticSite {
  readonly slot: number;
  readonly def: FuncDef;
  readonly ctx: CallCtx;
  readonly args: Evaluator[];
  readonly partition: Evaluator[];
  readonly when: Evaluator | undefined;
  /** State per partition key. */
  readonly states: Map<string, unknown>;
}

export interface RowNumberSite {
  readonly slot: number;
  readonly partition: Evaluator[];
  readonly orderBy: SortKey[];
}

export interface JoinSpec {
  readonly type: JoinType;
  /** Stream names of the left and right sides (the left may be the accumulated join). */
  readonly left: string;
  readonly right: string;
  readonly on?: Evaluator;
}

/** A stream ⋈ lookup-table join (sql §12.5): one query of the table per input row. */
export interface LookupSpec {
  readonly table: StreamDef;
  /** RIGHT and FULL run as INNER. */
  readonly type: "INNER" | "LEFT";
  /** Key fields of the table ... */
  readonly fields: string[];
  /** ... and the expressions over the input row their values must equal. */
  readonly values: Evaluator[];
}

export type OpSpec =
  | { kind: "preprocessor"; name: string; spec: PreprocessorSpec }
  | { kind: "decoder"; name: string }
  | { kind: "ratelimit"; name: string; interval: number }
  | { kind: "analytic"; name: string; sites: AnalyticSite[]; slots: number }
  /** `where`: the condition `cond` was compiled from (a shared stream's predicate index reads it). */
  | { kind: "filter" | "windowFilter"; name: string; cond: Evaluator; hits?: HitState; where?: Expr }
  | { kind: "watermark"; name: string; streams: string[]; lateTolerance: number; markers: boolean }
  | { kind: "window"; name: string; window: WindowSpec; trigger?: Evaluator; begin?: Evaluator; emit?: Evaluator; partition: Evaluator[]; eventTime: boolean; hits?: HitState; inc?: IncSpec }
  | { kind: "join_aligner"; name: string; tables: { name: string; retain: number }[] }
  | { kind: "join"; name: string; joins: JoinSpec[] }
  | { kind: "lookup"; name: string; spec: LookupSpec }
  | { kind: "agg_func"; name: string; calls: { slot: number; eval: Evaluator }[]; slots: number }
  | { kind: "aggregate"; name: string; dims: Evaluator[] }
  | { kind: "having"; name: string; cond: Evaluator; hits?: HitState }
  | { kind: "windowFunc"; name: string; site: RowNumberSite; slots: number }
  | { kind: "order"; name: string; keys: SortKey[] }
  | { kind: "project"; name: string; spec: ProjectSpec }
  | { kind: "projectset"; name: string; column: string; single: boolean };

/** A source of the rule with the operators inserted right after it (preprocessor ...). */
export interface SourcePlan {
  readonly def: StreamDef;
  /** Node name: the stream name (metric keys `source_<name>_0_...`). */
  readonly name: string;
  readonly helpers: OpSpec[];
  /** Columns the rule reads from this source (column pruning); null = all (`*`). */
  readonly columns: ReadonlySet<string> | null;
  /**
   * Columns whose values the rule observes: `columns` less what only `count(*)` names (it counts
   * rows and reads no value). Pipe mode converts just these to int64; undefined = `columns`.
   */
  readonly valueColumns?: ReadonlySet<string> | null;
}

export interface RulePlan {
  readonly sources: SourcePlan[];
  /** Operators after the sources merge, in order. */
  readonly ops: OpSpec[];
  /** Number of analytic / window-function cache slots per tuple. */
  readonly slots: number;
}

export type { FieldType };
