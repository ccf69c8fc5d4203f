/**
 * Window operator factory (windows.md §4, §6, §9): one operator per window kind and time mode
 * (when it fires), holding rows or accumulators as the plan chose (what it holds).
 */
import type { OpSpec } from "../../plan/specs.ts";
import { CountWindowOp } from "./count.ts";
import { EventGridWindowOp, EventSessionWindowOp, EventSlidingWindowOp } from "./event.ts";
import { HoppingWindowOp } from "./hopping.ts";
import { IncEventSessionWindowOp } from "./inc-event-session.ts";
import { SessionWindowOp } from "./session.ts";
import { SlidingWindowOp } from "./sliding.ts";
import { StateWindowOp } from "./state.ts";
import { TumblingWindowOp } from "./tumbling.ts";
import type { WindowEnv, WindowOp } from "./window-op.ts";

export { WindowOp, type WindowEnv } from "./window-op.ts";

type WindowOpSpec = Extract<OpSpec, { kind: "window" }>;

export function createWindowOp(spec: WindowOpSpec, env: WindowEnv): WindowOp {
  const w = spec.window;
  const inc = spec.inc;
  if (inc && !incremental(spec)) throw new Error(`no incremental ${w.type} window (${spec.name}): the planner should have chosen the buffered one`);
  if (spec.eventTime) {
    switch (w.type) {
      case "tumbling":
      case "hopping":
        return new EventGridWindowOp(spec.name, env, w, inc);
      case "sliding":
        return new EventSlidingWindowOp(spec.name, env, w, spec.trigger, spec.hits);
      case "session":
        return inc ? new IncEventSessionWindowOp(spec.name, env, w, inc) : new EventSessionWindowOp(spec.name, env, w);
      case "count":
        break; // buffered: rejected by the planner (windows §1.1)
      case "state":
        return new StateWindowOp(spec.name, env, spec.begin!, spec.emit!, w.call.args.length === 1, spec.partition, spec.hits);
    }
  }
  switch (w.type) {
    case "tumbling":
      return new TumblingWindowOp(spec.name, env, w, inc);
    case "hopping":
      return new HoppingWindowOp(spec.name, env, w, inc);
    case "sliding":
      return new SlidingWindowOp(spec.name, env, w, spec.trigger, spec.hits);
    case "session":
      return new SessionWindowOp(spec.name, env, w, inc);
    case "count":
      return new CountWindowOp(spec.name, env, w, inc, inc !== undefined && spec.eventTime);
    case "state":
      return new StateWindowOp(spec.name, env, spec.begin!, spec.emit!, w.call.args.length === 1, spec.partition, spec.hits);
  }
}

/** The kinds with an incremental holder (sliding and state windows are buffered only). */
function incremental(spec: WindowOpSpec): boolean {
  const t = spec.window.type;
  return t === "tumbling" || t === "hopping" || t === "session" || t === "count";
}
