/**
 * Window operator factory (windows.md §4, §6, §9): one implementation per window kind and time
 * mode, buffered or incremental as the plan chose.
 */
import type { OpSpec } from "../plan/specs.ts";
import { CountWindowOp } from "./count.ts";
import { EventGridWindowOp, EventSessionWindowOp, EventSlidingWindowOp } from "./event.ts";
import { HoppingWindowOp } from "./hopping.ts";
import { IncEventGridWindowOp, IncEventSessionWindowOp } from "./inc-event.ts";
import { IncCountWindowOp, IncHoppingWindowOp, IncSessionWindowOp, IncTumblingWindowOp } from "./inc-time.ts";
import { SessionWindowOp } from "./session.ts";
import { SlidingWindowOp } from "./sliding.ts";
import { StateWindowOp } from "./state.ts";
import { TumblingWindowOp } from "./tumbling.ts";
import type { WindowEnv, WindowOp } from "./window-op.ts";

export { WindowOp, type WindowEnv } from "./window-op.ts";

type WindowOpSpec = Extract<OpSpec, { kind: "window" }>;

export function createWindowOp(spec: WindowOpSpec, env: WindowEnv): WindowOp {
  const w = spec.window;
  if (spec.inc) return createIncremental(spec, env);
  if (spec.eventTime) {
    switch (w.type) {
      case "tumbling":
      case "hopping":
        return new EventGridWindowOp(spec.name, env, w);
      case "sliding":
        return new EventSlidingWindowOp(spec.name, env, w, spec.trigger, spec.hits);
      case "session":
        return new EventSessionWindowOp(spec.name, env, w);
      case "count":
        break; // rejected by the planner (windows §1.1)
      case "state":
        return new StateWindowOp(spec.name, env, spec.begin!, spec.emit!, w.call.args.length === 1, spec.partition, spec.hits);
    }
  }
  switch (w.type) {
    case "tumbling":
      return new TumblingWindowOp(spec.name, env, w);
    case "hopping":
      return new HoppingWindowOp(spec.name, env, w);
    case "sliding":
      return new SlidingWindowOp(spec.name, env, w, spec.trigger, spec.hits);
    case "session":
      return new SessionWindowOp(spec.name, env, w);
    case "count":
      return new CountWindowOp(spec.name, env, w);
    case "state":
      return new StateWindowOp(spec.name, env, spec.begin!, spec.emit!, w.call.args.length === 1, spec.partition, spec.hits);
  }
}

function createIncremental(spec: WindowOpSpec, env: WindowEnv): WindowOp {
  const w = spec.window;
  const inc = spec.inc!;
  if (spec.eventTime) {
    if (w.type === "tumbling" || w.type === "hopping") return new IncEventGridWindowOp(spec.name, env, w, inc);
    if (w.type === "session") return new IncEventSessionWindowOp(spec.name, env, w, inc);
  } else {
    if (w.type === "tumbling") return new IncTumblingWindowOp(spec.name, env, w, inc);
    if (w.type === "hopping") return new IncHoppingWindowOp(spec.name, env, w, inc);
    if (w.type === "session") return new IncSessionWindowOp(spec.name, env, w, inc);
  }
  if (w.type === "count") return new IncCountWindowOp(spec.name, env, w, inc, inc.ekuiper, spec.eventTime);
  throw new Error(`no incremental ${w.type} window (${spec.name}): the planner should have chosen the buffered one`);
}
