/**
 * gorilla/mux routing as eKuiper uses it (rest-api.md §1.2), Hono-style: the route table is
 * compiled once into per-segment-count lists, and dispatch is a loop over that prebuilt table.
 * Registration order decides; a path match with the wrong method is remembered for a 405; no
 * match at all is `404 page not found`.
 */
import { idRefusal, PAGE_NOT_FOUND } from "./respond.ts";

export interface Ctx {
  readonly method: string;
  readonly path: string;
  readonly params: Readonly<Record<string, string>>;
  readonly query: URLSearchParams;
  readonly headers: Headers;
  readonly request: Request;
  /** The body as text, read once (bounded by the body limit). */
  text(): Promise<string>;
  /** Routes another request through the same pipeline (`/batch/req`). */
  readonly dispatch: (req: Request) => Promise<Response>;
}

export type Handler<E> = (ctx: Ctx, env: E) => Response | Promise<Response>;

export interface RouteDef<E> {
  readonly method: string;
  readonly path: string;
  readonly handler: Handler<E>;
  /**
   * Serves nothing sensitive (`/ping`, the console's page): no token needed, and a page of any
   * origin may read it. Every other route, a new one included, needs the token and refuses pages
   * of foreign origins (net/origin-policy.ts).
   */
  readonly open?: boolean;
}

interface Compiled<E> {
  readonly method: string;
  /** Literal segment, or null for a `{var}`. */
  readonly segs: (string | null)[];
  readonly names: string[];
  readonly handler: Handler<E>;
  readonly open: boolean;
  readonly order: number;
}

export type Match<E> =
  | { kind: "route"; handler: Handler<E>; params: Record<string, string>; open: boolean }
  | { kind: "method" }
  | { kind: "none" };

export class Router<E> {
  /** Routes by number of path segments, in registration order. */
  private readonly bySegments = new Map<number, Compiled<E>[]>();

  constructor(routes: readonly RouteDef<E>[]) {
    routes.forEach((r, order) => {
      const parts = r.path.split("/").slice(1);
      const names: string[] = [];
      const segs = parts.map((p) => {
        const m = /^\{(\w+)\}$/.exec(p);
        if (m) {
          names.push(m[1]!);
          return null;
        }
        return p;
      });
      const list = this.bySegments.get(segs.length) ?? [];
      list.push({ method: r.method, segs, names, handler: r.handler, open: r.open === true, order });
      this.bySegments.set(segs.length, list);
    });
  }

  match(method: string, path: string): Match<E> {
    const parts = path.split("/").slice(1);
    const list = this.bySegments.get(parts.length);
    if (!list) return { kind: "none" };
    let pathMatched = false;
    outer: for (const r of list) {
      for (let i = 0; i < r.segs.length; i++) {
        const s = r.segs[i];
        const p = parts[i]!;
        if (s === null ? p === "" : s !== p) continue outer;
      }
      if (r.method !== method) {
        pathMatched = true;
        continue;
      }
      const params: Record<string, string> = {};
      let k = 0;
      for (let i = 0; i < r.segs.length; i++) if (r.segs[i] === null) params[r.names[k++]!] = parts[i]!;
      return { kind: "route", handler: r.handler, params, open: r.open };
    }
    return pathMatched ? { kind: "method" } : { kind: "none" };
  }

  /** Dispatches to the handler, or answers 404 / 405 like gorilla. */
  async dispatch(ctx: Omit<Ctx, "params">, env: E): Promise<Response> {
    const m = this.match(ctx.method, ctx.path);
    if (m.kind === "none") return PAGE_NOT_FOUND();
    if (m.kind === "method") return new Response(null, { status: 405 });
    return m.handler({ ...ctx, params: m.params }, env);
  }
}

/** `h` behind validation of the path id `param` (rest-api.md §1.8): eKuiper 2.x checks it before anything else. */
export function idChecked<E>(param: string, h: Handler<E>): Handler<E> {
  return (ctx, env) => idRefusal(ctx.params[param]!) ?? h(ctx, env);
}
