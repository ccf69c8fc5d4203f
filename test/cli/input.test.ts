/**
 * Input lines in batches (lib/cli/input.ts): however the bytes are cut into reads, the lines are
 * those of the whole input decoded at once — multi-byte characters and invalid sequences cut at a
 * read's end, a byte-order mark, blank lines, a last line without a newline.
 */
import { expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { lineBatches, openInput } from "../../lib/cli/input.ts";

function streamOf(chunks: Uint8Array[]): ReadableStream<Uint8Array> {
  return new ReadableStream({
    start(c) {
      for (const b of chunks) c.enqueue(b);
      c.close();
    },
  });
}

async function linesOf(chunks: Uint8Array[]): Promise<string[]> {
  const out: string[] = [];
  for await (const batch of lineBatches(streamOf(chunks))) out.push(...batch);
  return out;
}

/** What one decode of the whole input gives: its lines, without the empty one after a final newline. */
function expected(bytes: Uint8Array): string[] {
  const lines = new TextDecoder().decode(bytes).split("\n");
  if (lines[lines.length - 1] === "") lines.pop();
  return lines;
}

/** Cuts `bytes` at random places (reads of 0 to `max` bytes). */
function cut(bytes: Uint8Array, rnd: () => number, max: number): Uint8Array[] {
  const out: Uint8Array[] = [];
  let i = 0;
  while (i < bytes.length) {
    const n = Math.floor(rnd() * (max + 1));
    out.push(bytes.subarray(i, i + n));
    i += n;
  }
  return out;
}

function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 4294967296;
  };
}

const PIECES = ['{"a":1}', "é", "€", "😀", "\n", "\n", "\n", "", "x", '"ü"', "\r", " "];
const INVALID = [[0xff], [0xc3], [0xe2, 0x82], [0xf0, 0x9f, 0x98], [0xed, 0xa0, 0x80]];

function sample(rnd: () => number): Uint8Array {
  const enc = new TextEncoder();
  const parts: number[] = [];
  if (rnd() < 0.2) parts.push(0xef, 0xbb, 0xbf);
  const n = Math.floor(rnd() * 60);
  for (let k = 0; k < n; k++) {
    if (rnd() < 0.08) parts.push(...INVALID[Math.floor(rnd() * INVALID.length)]!);
    else parts.push(...enc.encode(PIECES[Math.floor(rnd() * PIECES.length)]!));
  }
  return Uint8Array.from(parts);
}

test("lines are those of the whole input decoded at once, however the reads cut it", async () => {
  const rnd = rng(11);
  for (let t = 0; t < 2000; t++) {
    const bytes = sample(rnd);
    const max = [1, 2, 3, 7, 64][t % 5]!;
    expect(await linesOf(cut(bytes, rnd, max))).toEqual(expected(bytes));
  }
});

test("a read without a newline continues the line; the last line needs no newline", async () => {
  const enc = new TextEncoder();
  expect(await linesOf([enc.encode('{"a":'), enc.encode("1}\n{"), enc.encode('"b":2}')])).toEqual(['{"a":1}', '{"b":2}']);
  expect(await linesOf([enc.encode("\n\nx\n")])).toEqual(["", "", "x"]);
  expect(await linesOf([])).toEqual([]);
});

/** Several reads' worth, with multi-byte characters and invalid sequences across read boundaries. */
function severalReads(seed: number): Uint8Array {
  const rnd = rng(seed);
  const parts: Uint8Array[] = [];
  let size = 0;
  while (size < 300_000) {
    const b = sample(rnd);
    parts.push(b);
    size += b.length;
  }
  const bytes = new Uint8Array(size);
  let at = 0;
  for (const b of parts) bytes.set(b, (at += b.length) - b.length);
  return bytes;
}

async function linesOfInput(path: string | undefined): Promise<string[]> {
  const out: string[] = [];
  for await (const batch of lineBatches(openInput(path))) out.push(...batch);
  return out;
}

test("a file read in reused buffers gives the lines of the whole file", async () => {
  const dir = mkdtempSync(join(tmpdir(), "floe-input-"));
  try {
    const bytes = severalReads(5);
    const path = join(dir, "in.ndjson");
    writeFileSync(path, bytes);
    expect(await linesOfInput(path)).toEqual(expected(bytes));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("a named pipe given as the input file gives the lines written to it", async () => {
  const dir = mkdtempSync(join(tmpdir(), "floe-input-"));
  try {
    const bytes = severalReads(6);
    const src = join(dir, "src.ndjson");
    const fifo = join(dir, "in.fifo");
    writeFileSync(src, bytes);
    expect(Bun.spawnSync(["mkfifo", fifo]).exitCode).toBe(0);
    // The writer is another process: the pipe fills and waits for the reader, read by read.
    const writer = Bun.spawn(["sh", "-c", 'cat "$0" > "$1"', src, fifo]);
    const lines = await linesOfInput(fifo);
    expect(await writer.exited).toBe(0);
    expect(lines).toEqual(expected(bytes));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("standard input gives the same lines whether it is a redirected file or a pipe", async () => {
  const dir = mkdtempSync(join(tmpdir(), "floe-input-"));
  try {
    const bytes = severalReads(7);
    const path = join(dir, "in.ndjson");
    writeFileSync(path, bytes);
    const script = join(dir, "count.ts");
    writeFileSync(
      script,
      `import { lineBatches, openInput } from ${JSON.stringify(join(import.meta.dir, "../../lib/cli/input.ts"))};\n` +
        "const out = [];\nfor await (const b of lineBatches(openInput(undefined))) out.push(...b);\nprocess.stdout.write(JSON.stringify(out));\n",
    );
    const fromFile = Bun.spawn([process.execPath, script], { stdin: Bun.file(path), stdout: "pipe" });
    const fromPipe = Bun.spawn([process.execPath, script], { stdin: "pipe", stdout: "pipe" });
    fromPipe.stdin.write(bytes);
    fromPipe.stdin.end();
    const want = expected(bytes);
    expect(JSON.parse(await new Response(fromFile.stdout).text())).toEqual(want);
    expect(JSON.parse(await new Response(fromPipe.stdout).text())).toEqual(want);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
