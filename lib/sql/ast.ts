/**
 * The SQL syntax tree produced by the grammar (grammar/). Nodes are discriminated unions on `kind`;
 * names mirror eKuiper's AST where its `String()` form shows up in error messages.
 */

export type BinaryOp =
  | "+" | "-" | "*" | "/" | "%" | "&" | "|" | "^"
  | "=" | "!=" | "<" | "<=" | ">" | ">="
  | "AND" | "OR";

export type TimeUnit = "DD" | "HH" | "MI" | "SS" | "MS";

export interface IntegerLit { kind: "integer"; value: bigint }
export interface NumberLit { kind: "number"; value: number }
export interface StringLit { kind: "string"; value: string }
export interface BooleanLit { kind: "boolean"; value: boolean }
export interface TimeUnitLit { kind: "timeUnit"; unit: TimeUnit }

/** A column reference; `stream` is the qualifier as written (`s.c`), if any. */
export interface FieldRef { kind: "field"; name: string; stream?: string }

/** `*`, `s.*`, `* EXCEPT(a, b) REPLACE(expr AS c)`. */
export interface Wildcard { kind: "wildcard"; stream?: string; except: string[]; replace: Field[] }

/** A metadata key inside `meta()`/`mqtt()`; `name` is `*` for `meta(*)`. */
export interface MetaRef { kind: "meta"; name: string; stream?: string }

export interface Binary { kind: "binary"; op: BinaryOp; left: Expr; right: Expr }
/** `left -> right`; `right` should be a plain field name (else a runtime error). */
export interface Arrow { kind: "arrow"; left: Expr; right: Expr }
export interface Index { kind: "index"; left: Expr; index: Expr }
/** `left[start:end]`; a missing bound is open. */
export interface Slice { kind: "slice"; left: Expr; start?: Expr; end?: Expr }
export interface Paren { kind: "paren"; expr: Expr }
export interface In { kind: "in"; not: boolean; left: Expr; list?: Expr[]; set?: Expr }
export interface Between { kind: "between"; not: boolean; left: Expr; low: Expr; high: Expr }
export interface Like { kind: "like"; not: boolean; left: Expr; pattern: Expr }
export interface When { cond: Expr; result: Expr }
export interface Case { kind: "case"; value?: Expr; whens: When[]; else?: Expr }

export interface Over {
  partition: Expr[];
  when?: Expr;
  orderBy: SortField[];
}

/** A function call; `name` is lower-cased. `filter`/`over` only after the functions allowing them. */
export interface Call {
  kind: "call";
  name: string;
  args: Expr[];
  over?: Over;
  filter?: Expr;
}

export type Expr =
  | IntegerLit
  | NumberLit
  | StringLit
  | BooleanLit
  | TimeUnitLit
  | FieldRef
  | Wildcard
  | MetaRef
  | Binary
  | Arrow
  | Index
  | Slice
  | Paren
  | In
  | Between
  | Like
  | Case
  | Call;

/** One select field; `name` is the output column (alias, column name, function name, kuiper_field_n). */
export interface Field {
  expr: Expr;
  name: string;
  alias?: string;
  invisible: boolean;
}

export interface Source { name: string; alias?: string }

export type JoinType = "INNER" | "LEFT" | "RIGHT" | "FULL" | "CROSS";
export interface Join { type: JoinType; source: Source; on?: Expr }

export interface SortField { expr: Expr; ascending: boolean }

export interface SelectStatement {
  kind: "select";
  fields: Field[];
  from: Source;
  joins: Join[];
  where?: Expr;
  groupBy: Expr[];
  having?: Expr;
  orderBy: SortField[];
  /** undefined: no LIMIT; negative: no limit (eKuiper's `LIMIT -1`). */
  limit?: number;
  /** The statement ended with `;` (eKuiper then skips some parse-time checks). */
  semicolon: boolean;
}

export type FieldType =
  | "bigint" | "float" | "string" | "datetime" | "boolean" | "bytea"
  | { array: FieldType }
  | { struct: StreamField[] };

export interface StreamField {
  name: string;
  type: FieldType;
  /** Converted DEFAULT literal value (present only with a DEFAULT clause). */
  default?: bigint | number | string | boolean;
  /** DEFAULT literal text as written (eKuiper's DefaultClause). */
  defaultText?: string;
}

/** Option values as stored by eKuiper (strings, except the typed ones). */
export interface StreamOptions {
  DATASOURCE?: string;
  FORMAT?: string;
  KEY?: string;
  CONF_KEY?: string;
  TYPE?: string;
  TIMESTAMP?: string;
  TIMESTAMP_FORMAT?: string;
  SCHEMAID?: string;
  EXTRA?: string;
  VERSION?: string;
  KIND?: string;
  DELIMITER?: string;
  STRICT_VALIDATION?: boolean;
  SHARED?: boolean;
  TEMP?: boolean;
  RETAIN_SIZE?: number;
}

export interface CreateStatement {
  kind: "create";
  streamKind: "stream" | "table";
  name: string;
  /** null: schemaless `()`. */
  fields: StreamField[] | null;
  options: StreamOptions;
}

export interface ShowStatement { kind: "show"; what: "streams" | "tables" }
export interface NamedStatement {
  kind: "describe" | "explain" | "drop";
  streamKind: "stream" | "table";
  name: string;
}

export type Statement = SelectStatement | CreateStatement | ShowStatement | NamedStatement;
