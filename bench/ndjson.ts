/**
 * Writes bench.md's telemetry payloads as NDJSON (one record per line) for pipe-mode runs:
 * `{"id":"<tag>_<conn>_<seq>","device":"dev_<n>","temp":<t>,"speed":<s>,"ts":<ms>}` with
 * temp = 20.0 + (k % 150) / 10, speed = (k % 1300) / 10, devices round-robin.
 */
export async function writeTelemetry(path: string, records: number, devices = 1000, tag = "w1"): Promise<void> {
  const w = Bun.file(path).writer();
  const start = 1_700_000_000_000;
  for (let k = 0; k < records; k++) {
    const temp = 20.0 + (k % 150) / 10;
    const speed = (k % 1300) / 10;
    w.write(`{"id":"${tag}_0_${k}","device":"dev_${k % devices}","temp":${temp},"speed":${speed},"ts":${start + Math.floor(k / 100)}}\n`);
    if ((k & 0xffff) === 0) await w.flush();
  }
  await w.end();
}
