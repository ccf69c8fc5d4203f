/** Input lines in batches: one batch per read of the file or standard input (STYLE: batches cross boundaries). */

const NL = 10;

export async function* lineBatches(stream: ReadableStream<Uint8Array>): AsyncIterable<string[]> {
  const decoder = new TextDecoder();
  let rest = "";
  for await (const chunk of stream) {
    // The unfinished line of the last read ends at this read's first newline; the rest of the
    // read is decoded and split on its own, so a read's text is never a concatenation to flatten.
    // The decoder keeps a sequence cut at the read's end (stream: true), and a newline byte is
    // never inside one: every piece decodes as the whole text would.
    const first = chunk.indexOf(NL);
    if (first < 0) {
      rest += decoder.decode(chunk, { stream: true });
      continue;
    }
    const head = decoder.decode(chunk.subarray(0, first + 1), { stream: true });
    const lines = decoder.decode(chunk.subarray(first + 1), { stream: true }).split("\n");
    lines.unshift(rest + head.slice(0, head.length - 1));
    rest = lines.pop()!;
    yield lines;
  }
  rest += decoder.decode();
  if (rest) yield [rest];
}

/** `-` or absent → standard input; else the file. */
export function openInput(path: string | undefined): ReadableStream<Uint8Array> {
  return !path || path === "-" ? Bun.stdin.stream() : Bun.file(path).stream();
}
