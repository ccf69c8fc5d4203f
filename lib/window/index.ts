/** Window operator factory: one implementation per window kind (windows.md §4). */
import type { OpSpec } from "../plan/specs.ts";
import { CountWindowOp } from "./count.ts";
import { HoppingWindowOp } from "./hopping.ts";
import { SessionWindowOp } from "./session.ts";
import { SlidingWindowOp } from "./sliding.ts";
import { StateWindowOp } from "./state.ts";
import { TumblingWindowOp } from "./tumbling.ts";
import type { WindowEnv, WindowOp } from "./window-op.ts";

export { WindowOp, type WindowEnv } from "./window-op.ts";

export function createWindowOp(spec: Extract<OpSpec, { kind: "window" }>, env: WindowEnv): WindowOp {
  const w = spec.window;
  switch (w.type) {
    case "tumbling":
      return new TumblingWindowOp(spec.name, env, w);
    case "hopping":
      return new HoppingWindowOp(spec.name, env, w);
    case "sliding":
      return new SlidingWindowOp(spec.name, env, w, spec.trigger);
    case "session":
      return new SessionWindowOp(spec.name, env, w);
    case "count":
      return new CountWindowOp(spec.name, env, w);
    case "state":
      return new StateWindowOp(spec.name, env, spec.begin!, spec.emit!, w.call.args.length === 1, spec.partition);
  }
}
