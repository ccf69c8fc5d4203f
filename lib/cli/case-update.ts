/**
 * `floe test --update`: rewrites only the `want` value of the cases it updates, in the text of the
 * case file, so the rest keeps its key order, spacing and comments-free layout exactly. The new
 * `want` takes the layout of the old one (or, when there was none, of the case's `input`): one
 * line, one emission per line, or fully expanded, with the file's indentation unit.
 */

interface Member {
  readonly key: string;
  readonly keyStart: number;
  readonly valueStart: number;
  readonly valueEnd: number;
}

interface CaseSpan {
  readonly end: number;
  readonly members: Member[];
}

/** The case objects of a case file (one object, or an array of them) with their members' spans. */
function caseSpans(text: string): CaseSpan[] {
  let i = 0;
  const ws = () => {
    while (i < text.length && /\s/.test(text[i]!)) i++;
  };
  const skipString = () => {
    for (i++; text[i] !== '"'; i++) if (text[i] === "\\") i++;
    i++;
  };
  const skipValue = () => {
    const c = text[i];
    if (c === '"') return skipString();
    if (c !== "{" && c !== "[") {
      while (i < text.length && !/[\s,\]}]/.test(text[i]!)) i++;
      return;
    }
    let depth = 0;
    do {
      const d = text[i];
      if (d === '"') {
        skipString();
        continue;
      }
      if (d === "{" || d === "[") depth++;
      else if (d === "}" || d === "]") depth--;
      i++;
    } while (depth > 0);
  };
  const object = (): CaseSpan => {
    const members: Member[] = [];
    i++;
    ws();
    while (text[i] !== "}") {
      const keyStart = i;
      skipString();
      const key = JSON.parse(text.slice(keyStart, i)) as string;
      ws();
      i++; // ':'
      ws();
      const valueStart = i;
      skipValue();
      members.push({ key, keyStart, valueStart, valueEnd: i });
      ws();
      if (text[i] === ",") i++;
      ws();
    }
    i++;
    return { end: i, members };
  };
  ws();
  if (text[i] === "{") return [object()];
  const out: CaseSpan[] = [];
  i++;
  ws();
  while (text[i] !== "]") {
    out.push(object());
    ws();
    if (text[i] === ",") i++;
    ws();
  }
  return out;
}

function lineIndent(text: string, at: number): string {
  const start = text.lastIndexOf("\n", at - 1) + 1;
  return /^[ \t]*/.exec(text.slice(start))![0];
}

/** The file's indentation unit: the smallest indentation of an indented line (two spaces when none). */
function indentUnit(text: string): string {
  let unit: string | undefined;
  for (const m of text.matchAll(/\n([ \t]+)\S/g)) if (unit === undefined || m[1]!.length < unit.length) unit = m[1]!;
  return unit ?? "  ";
}

/** JSON on one line; `spaced`: `{"a": 1, "b": 2}` as people write it, else `{"a":1,"b":2}`. */
function oneLine(v: unknown, spaced: boolean): string {
  const sep = spaced ? ", " : ",";
  if (Array.isArray(v)) return `[${v.map((x) => oneLine(x, spaced)).join(sep)}]`;
  if (v !== null && typeof v === "object") return `{${Object.entries(v).map(([k, x]) => `${JSON.stringify(k)}:${spaced ? " " : ""}${oneLine(x, spaced)}`).join(sep)}}`;
  return JSON.stringify(v);
}

/** `want` laid out like `sample` (the old want, or the input), at indentation `base`. */
function layout(want: unknown[][], sample: string | undefined, base: string, unit: string): string {
  const spaced = sample === undefined || /": |, /.test(sample);
  if (sample !== undefined && !sample.includes("\n")) return oneLine(want, spaced);
  // One element per line when the sample's elements each sit on one line.
  const perLine = sample === undefined || /^\[\s*\n[ \t]*[[{].*[\]}],?\s*$/m.test(sample);
  if (perLine) return want.length ? `[\n${want.map((e) => base + unit + oneLine(e, spaced)).join(",\n")}\n${base}]` : "[]";
  return JSON.stringify(want, null, unit).replace(/\n/g, `\n${base}`);
}

/** The case file `text` with the `want` of case `index` replaced (or added) by each update. */
export function rewriteWants(text: string, updates: readonly { index: number; want: unknown[][] }[]): string {
  const spans = caseSpans(text);
  const unit = indentUnit(text);
  // From the last edit to the first, so that earlier offsets stay valid.
  for (const u of [...updates].sort((a, b) => b.index - a.index)) {
    const span = spans[u.index];
    if (!span) continue;
    const old = span.members.find((m) => m.key === "want");
    if (old) {
      const sample = text.slice(old.valueStart, old.valueEnd);
      text = text.slice(0, old.valueStart) + layout(u.want, sample, lineIndent(text, old.keyStart), unit) + text.slice(old.valueEnd);
      continue;
    }
    const last = span.members[span.members.length - 1];
    const input = span.members.find((m) => m.key === "input");
    const sample = input ? text.slice(input.valueStart, input.valueEnd) : undefined;
    if (!last) {
      text = text.slice(0, span.end - 1) + `"want": ${layout(u.want, sample, "", unit)}` + text.slice(span.end - 1);
      continue;
    }
    const multiLine = text.slice(span.members[0]!.keyStart, last.valueEnd).includes("\n");
    const base = multiLine ? lineIndent(text, last.keyStart) : "";
    const lead = multiLine ? `,\n${base}` : ", ";
    text = text.slice(0, last.valueEnd) + `${lead}"want": ${layout(u.want, sample, base, unit)}` + text.slice(last.valueEnd);
  }
  return text;
}
