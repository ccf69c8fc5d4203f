/**
 * A graph `pick` node (graph-rules.md §6.5): the SELECT list of ProjectOp, whose result keeps
 * flowing as rows (a row stays a row, a collection a collection) for the nodes after it.
 */
import { Tuple } from "../expr/row.ts";
import { Collection, Emission, type Item } from "../core/item.ts";
import type { OpEnv } from "../core/operator.ts";
import type { ProjectSpec } from "../plan/specs.ts";
import { ProjectOp } from "./project.ts";

export class PickOp extends ProjectOp {
  private current: Item | null = null;
  constructor(name: string, env: OpEnv, spec: ProjectSpec) {
    super(name, env, spec);
  }

  protected override process(item: Item): void {
    this.current = item;
    super.process(item);
  }

  protected override emit(item: Item): void {
    const c = this.current;
    if (!(item instanceof Emission) || c === null) {
      super.emit(item);
      return;
    }
    if (c instanceof Tuple) {
      super.emit(new Tuple(item.row ?? item.rows[0]!, c.meta, c.ts, c.emitter));
      return;
    }
    const window = c instanceof Collection ? c.window : null;
    const ts = window ? window.trigger : 0;
    const rows = item.rows.map((r) => new Tuple(r, item.meta, ts, ""));
    super.emit(new Collection(rows, window));
  }
}
