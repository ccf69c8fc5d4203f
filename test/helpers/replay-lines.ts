/** One pipe-mode replay of JSON lines through a rule (array emissions, flushed at the end, UTC): its output, warnings and result. */
import { runPipe } from "../../lib/pipe/direct.ts";
import type { PipeResult } from "../../lib/pipe/request.ts";
import { UTC } from "../../lib/value/time.ts";

export async function replayLines(sql: string, lines: string[], options: Record<string, unknown>): Promise<{ out: string; err: string; res: PipeResult }> {
  let out = "";
  let err = "";
  const res = await runPipe({
    sql,
    options,
    input: (async function* () {
      yield lines;
    })(),
    replay: true,
    emit: "array",
    onEof: "flush",
    zone: UTC,
    write: (t) => void (out += t),
    warn: (t) => void (err += t),
  });
  return { out, err, res };
}
