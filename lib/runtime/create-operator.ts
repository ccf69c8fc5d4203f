/** The operator a plan's (or a graph rule's) node spec makes. */
import type { OpSpec } from "../plan/specs.ts";
import type { GraphOpSpec } from "../plan/graph.ts";
import type { Operator } from "../core/operator.ts";
import { createWindowOp, type WindowEnv } from "../ops/window/index.ts";
import { JoinAlignerOp, JoinOp } from "../ops/join.ts";
import { LookupOp } from "../ops/lookup.ts";
import { AggregateOp } from "../ops/aggregate.ts";
import { AggFuncOp } from "../ops/agg-func.ts";
import { AnalyticOp } from "../ops/analytic.ts";
import { FilterOp } from "../ops/filter.ts";
import { OrderOp } from "../ops/order.ts";
import { DecoderOp } from "../ops/decoder.ts";
import { RateLimitOp } from "../ops/rate-limit.ts";
import { PreprocessorOp } from "../ops/preprocessor.ts";
import { ProjectOp } from "../ops/project.ts";
import { ProjectSetOp } from "../ops/project-set.ts";
import { WatermarkOp } from "../ops/watermark.ts";
import { WindowFuncOp } from "../ops/window-func.ts";
import { ColumnOp } from "../ops/column.ts";
import { PickOp } from "../ops/pick.ts";
import { SwitchOp } from "../ops/switch.ts";

export function createOperator(spec: OpSpec | GraphOpSpec, env: WindowEnv): Operator {
  switch (spec.kind) {
    case "switch":
      return new SwitchOp(spec.name, env, spec.cases, spec.stopAtFirstMatch);
    case "column":
      return new ColumnOp(spec.name, env, spec.field, spec.eval, spec.aggregate);
    case "pick":
      return new PickOp(spec.name, env, spec.spec);
    case "decoder":
      return new DecoderOp(spec.name, env);
    case "ratelimit":
      return new RateLimitOp(spec.name, env, spec.interval);
    case "preprocessor":
      return new PreprocessorOp(spec.name, env, spec.spec);
    case "analytic":
      return new AnalyticOp(spec.name, env, spec.sites, spec.slots);
    case "filter":
    case "windowFilter":
      return FilterOp.where(spec.name, env, spec.cond, spec.hits, spec.kind === "filter" ? spec.where : undefined);
    case "watermark":
      return new WatermarkOp(spec.name, env, spec.streams, spec.lateTolerance, spec.markers);
    case "window":
      return createWindowOp(spec, env);
    case "join_aligner":
      return new JoinAlignerOp(spec.name, env, spec.tables);
    case "join":
      return new JoinOp(spec.name, env, spec.joins);
    case "lookup":
      return new LookupOp(spec.name, env, spec.spec);
    case "agg_func":
      return new AggFuncOp(spec.name, env, spec.calls, spec.slots);
    case "aggregate":
      return new AggregateOp(spec.name, env, spec.dims);
    case "having":
      return FilterOp.having(spec.name, env, spec.cond, spec.hits);
    case "windowFunc":
      return new WindowFuncOp(spec.name, env, spec.site, spec.slots);
    case "order":
      return new OrderOp(spec.name, env, spec.keys);
    case "project":
      return new ProjectOp(spec.name, env, spec.spec);
    case "projectset":
      return new ProjectSetOp(spec.name, env, spec.column, spec.single);
  }
}
