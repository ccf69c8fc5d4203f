/** Input lines in batches: one batch per read of the file or standard input (STYLE: batches cross boundaries). */

export async function* lineBatches(stream: ReadableStream<Uint8Array>): AsyncIterable<string[]> {
  const decoder = new TextDecoder();
  let rest = "";
  for await (const chunk of stream) {
    const text = rest + decoder.decode(chunk, { stream: true });
    const lines = text.split("\n");
    rest = lines.pop()!;
    if (lines.length) yield lines;
  }
  rest += decoder.decode();
  if (rest) yield [rest];
}

/** `-` or absent → standard input; else the file. */
export function openInput(path: string | undefined): ReadableStream<Uint8Array> {
  return !path || path === "-" ? Bun.stdin.stream() : Bun.file(path).stream();
}
