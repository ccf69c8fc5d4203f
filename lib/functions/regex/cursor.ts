/**
 * One search over one input, the same for both engines: re2js's Matcher already has this shape;
 * JsCursor gives it to a `g` RegExp (searching from `from` with the whole input as context).
 */
export interface MatchCursor {
  /** Searches from UTF-16 index `from`; true when a match was found. */
  find(from: number): boolean;
  /** Start of the last match (group 0). */
  start(): number;
  /** End of the last match (group 0). */
  end(): number;
  /** Text of group `i` of the last match; null when it did not take part. */
  group(i: number): string | null;
}

export class JsCursor implements MatchCursor {
  private m: RegExpExecArray | null = null;
  constructor(
    private readonly re: RegExp,
    private readonly s: string,
  ) {}

  find(from: number): boolean {
    this.re.lastIndex = from;
    this.m = this.re.exec(this.s);
    return this.m !== null;
  }
  start(): number {
    return this.m!.index;
  }
  end(): number {
    return this.m!.index + this.m![0].length;
  }
  group(i: number): string | null {
    return this.m![i] ?? null;
  }
}
