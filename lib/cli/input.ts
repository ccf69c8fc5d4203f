/** Input lines in batches: one batch per read of the file or standard input (STYLE: batches cross boundaries). */
import { open } from "node:fs/promises";

const NL = 10;

export async function* lineBatches(stream: AsyncIterable<Uint8Array>): AsyncIterable<string[]> {
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

/** A file's reads: 64 KiB, into one buffer (each read is consumed before the next is asked for). */
const READ_SIZE = 65536;

/** `-` or absent → standard input; else the file. */
export function openInput(path: string | undefined): AsyncIterable<Uint8Array> {
  return !path || path === "-" ? Bun.stdin.stream() : readFile(path);
}

/**
 * The file in reads of READ_SIZE into one reused buffer: Bun.file().stream() hands a fresh
 * half-megabyte array per read, and that garbage (page faults, collections) cost about 5 % of
 * the CPU of a 1M-line replay (issue 11, W1).
 */
async function* readFile(path: string): AsyncIterable<Uint8Array> {
  const file = await open(path, "r");
  const buf = new Uint8Array(READ_SIZE);
  try {
    for (;;) {
      const { bytesRead } = await file.read(buf, 0, READ_SIZE, null);
      if (bytesRead === 0) return;
      yield buf.subarray(0, bytesRead);
    }
  } finally {
    await file.close();
  }
}
