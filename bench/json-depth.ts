/**
 * Cost of the JSON nesting guard on the decode hot path: the byte decoder of a json
 * stream (bytes → text → JSON.parse) with and without the guard it runs (`valueTooDeep` on the
 * parsed value, from 600 B on), and the two text scans alone (`bytesTooDeep`, `textTooDeep`, for
 * comparison), over a W1-like payload (62 B: the guard is one length compare), a 763 B object
 * with nested arrays and a 25 KB array of 400 rows.
 * Variants are interleaved in rounds and the best round is kept, so a loaded machine skews less.
 *   node_modules/.bin/bun bench/json-depth.ts [--rounds 7] [--ms 200]
 */
import { bytesTooDeep, MIN_DEEP_LENGTH, textTooDeep, valueTooDeep } from "../lib/value/json-depth.ts";

const args = process.argv.slice(2);
const arg = (name: string, def: number) => (args.includes(name) ? Number(args[args.indexOf(name) + 1]) : def);
const rounds = arg("--rounds", 7);
const ms = arg("--ms", 200);

const row = (i: number) => ({ id: i, device: `d${i % 100}`, temp: 20 + (i % 13) * 0.5, hum: 40 + (i % 7), ts: 1700000000000 + i });
const payloads: Record<string, string> = {
  "w1-like": JSON.stringify(row(1)),
  "nested": JSON.stringify({ ...row(2), note: "a \"quoted\" [text] {x}", tags: Array.from({ length: 20 }, (_, i) => ({ k: `tag${i}`, v: [i, i + 1, { x: i }] })) }),
  "batch of 400": JSON.stringify(Array.from({ length: 400 }, (_, i) => row(i))),
};

const dec = new TextDecoder();
let sink = 0;

/** ns per call of `f`, over `ms`. */
function time(f: () => void): number {
  let n = 0;
  const t0 = performance.now();
  let t = t0;
  while (t - t0 < ms) {
    for (let i = 0; i < 100; i++) f();
    n += 100;
    t = performance.now();
  }
  return ((t - t0) * 1e6) / n;
}

for (const [name, text] of Object.entries(payloads)) {
  const bytes = new TextEncoder().encode(text);
  const parsed = JSON.parse(text) as unknown;
  const variants: Record<string, () => void> = {
    walk: () => void (sink += valueTooDeep(parsed) ? 1 : 0),
    plain: () => void (sink += JSON.parse(dec.decode(bytes)) ? 1 : 0),
    guarded: () => {
      const v = JSON.parse(dec.decode(bytes)) as unknown;
      if (bytes.length >= MIN_DEEP_LENGTH && valueTooDeep(v)) throw new Error("deep");
      sink += v ? 1 : 0;
    },
    bytesGuard: () => void (sink += bytesTooDeep(bytes) ? 1 : 0),
    textGuard: () => void (sink += textTooDeep(text) ? 1 : 0),
  };
  const best: Record<string, number> = {};
  for (let r = 0; r < rounds; r++)
    for (const [k, f] of Object.entries(variants)) {
      const ns = time(f);
      if (r > 0) best[k] = Math.min(best[k] ?? Infinity, ns);
    }
  const { plain, guarded, walk, bytesGuard, textGuard } = best as Record<string, number>;
  console.log(
    `${name.padEnd(14)} ${bytes.length} B: decode ${plain!.toFixed(0)} ns, with guard ${guarded!.toFixed(0)} ns (${(((guarded! - plain!) / plain!) * 100).toFixed(1)} %), the walk alone ${walk!.toFixed(0)} ns; ` +
      `a byte scan would cost ${bytesGuard!.toFixed(0)} ns, a text scan ${textGuard!.toFixed(0)} ns`,
  );
}
if (sink < 0) console.log(sink);
