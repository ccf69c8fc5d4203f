/**
 * A whole-array `delimited` payload built a slice at a time, as json-slices.ts builds
 * a JSON one: the header (`hasHeader`) and one line per row that is a map, joined by newlines —
 * byte-identical to the delimited encoder's one pass over the collection (columns from the first
 * map row, sorted [quirk]).
 */
import { delimitedColumns, delimitedLine } from "../formats/encode.ts";
import { isObj, type Value } from "../value/values.ts";
import type { PayloadSlices } from "./json-slices.ts";
import { ROWS_PER_LOOK, type Turn } from "../core/turn.ts";

/** Rows encoded between two clock checks. */
const CHUNK = ROWS_PER_LOOK;

export class DelimitedSlices implements PayloadSlices {
  private readonly parts: string[] = [];
  private readonly cols: string[];
  /** The next row. */
  private r = 0;
  /** No line written yet (the next one takes no newline before it). */
  private first = true;
  spentMs = 0;

  constructor(
    private readonly rows: readonly Value[],
    private readonly delimiter: string,
    hasHeader: boolean,
  ) {
    this.cols = delimitedColumns(rows);
    if (hasHeader) {
      this.parts.push(this.cols.join(delimiter));
      this.first = false;
    }
  }

  step(turn: Turn, cap: number): boolean {
    const t0 = performance.now();
    const rows = this.rows;
    const n = rows.length;
    let done = 0;
    while (this.r < n) {
      const end = Math.min(n, this.r + CHUNK);
      let s = "";
      for (let i = this.r; i < end; i++) {
        const row = rows[i]!;
        if (!isObj(row)) continue;
        s += (this.first ? "" : "\n") + delimitedLine(row, this.cols, this.delimiter);
        this.first = false;
      }
      this.parts.push(s);
      this.r = end;
      done += CHUNK;
      if (turn.over(done, cap)) break;
    }
    this.spentMs += performance.now() - t0;
    return this.r === n;
  }

  text(): string {
    return this.parts.join("");
  }
}
