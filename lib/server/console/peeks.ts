/**
 * The console's data peek on a rule (runtime/peek.ts): `POST /ui/api/rules/{id}/peek` turns it on
 * (or keeps it on) and answers what each node pushed out lately; it goes off by itself PEEK_TTL_MS
 * after the last such call (a closed tab leaves nothing running), or with `DELETE`. Off unless
 * asked: a rule nobody peeks at runs its plain wiring. Console routes: the console's own JSON.
 */
import { ErrCode } from "../../errors.ts";
import { Peek } from "../../runtime/peek.ts";
import type { Engine } from "../engine.ts";
import { errorBody, json } from "../respond.ts";
import type { RouteDef } from "../router.ts";

export const PEEK_TTL_MS = 30_000;

interface On {
  readonly peek: Peek;
  readonly timer: ReturnType<typeof setTimeout>;
}

const byEngine = new WeakMap<Engine, Map<string, On>>();

function peeksOf(e: Engine): Map<string, On> {
  let m = byEngine.get(e);
  if (!m) {
    const fresh = new Map<string, On>();
    byEngine.set(e, (m = fresh));
    e.onClose(() => {
      for (const o of fresh.values()) clearTimeout(o.timer);
      fresh.clear();
    });
  }
  return m;
}

function stop(e: Engine, id: string): void {
  const m = peeksOf(e);
  const o = m.get(id);
  if (!o) return;
  clearTimeout(o.timer);
  m.delete(id);
  e.rules.get(id)?.peek(undefined);
}

export const peekRoutes: RouteDef<Engine>[] = [
  {
    method: "POST",
    path: "/ui/api/rules/{id}/peek",
    handler: (ctx, e) => {
      const id = ctx.params.id!;
      const lc = e.rules.get(id);
      if (!lc) return errorBody(ErrCode.notFound, `Rule ${id} is not found in registry`, 404);
      const m = peeksOf(e);
      const old = m.get(id);
      if (old) clearTimeout(old.timer);
      const peek = old?.peek ?? new Peek();
      // Installed again on every call: a run started since (a restart) gets the taps too.
      if (!lc.peek(peek)) {
        m.delete(id);
        return errorBody(ErrCode.undefined, `Rule ${id} is not running`, 400);
      }
      const timer = setTimeout(() => stop(e, id), PEEK_TTL_MS);
      timer.unref?.();
      m.set(id, { peek, timer });
      return json({ on: true, ttlMs: PEEK_TTL_MS, nodes: peek.snapshot() });
    },
  },
  {
    method: "DELETE",
    path: "/ui/api/rules/{id}/peek",
    handler: (ctx, e) => {
      stop(e, ctx.params.id!);
      return json({ on: false });
    },
  },
];
