/**
 * `floe run` never loses a bad row silently: row errors and decode errors reach stderr
 * with their line number (stdin) or source and topic (MQTT), rate-limited; `--strict` exits 3 when
 * any occurred; a rule stopped by error exits 1. Through cli.ts, and once through dist/floe.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connectAsync } from "mqtt";
import { Mosquitto } from "../helpers/mosquitto.ts";
import { waitFor } from "../helpers/runtime.ts";

const ROOT = join(import.meta.dir, "../..");
const BIN = join(ROOT, "dist/floe");
const tmp = mkdtempSync(join(tmpdir(), "floe-pipe-errors-"));
const DIV = "run Select error: alias: r expr: binaryExpr:{ s.temperature / s.humidity } meet error, err:divided by zero";

function file(name: string, text: string): string {
  const p = join(tmp, name);
  writeFileSync(p, text);
  return p;
}

const HOT = file("hot.sql", "SELECT temperature / humidity AS r FROM s");

function floe(args: string[], stdin = "", exe: string[] = [process.execPath, join(ROOT, "cli.ts")]): { code: number; out: string; err: string } {
  const p = Bun.spawnSync([...exe, "run", ...args], { stdin: Buffer.from(stdin), cwd: tmp });
  return { code: p.exitCode ?? -1, out: p.stdout.toString(), err: p.stderr.toString() };
}

describe("floe run reports bad rows", () => {
  test("a division by zero is reported with its line number; --strict exits 3, without it exits 0", () => {
    const input = '{"temperature":30,"humidity":0}\n';
    const strict = floe([HOT, "--strict"], input);
    expect(strict.out).toBe("");
    expect(strict.err).toBe(`floe: line 1: ${DIV}\nfloe: 1 record(s) lost or rejected (1 row error(s))\n`);
    expect(strict.code).toBe(3);
    const plain = floe([HOT], input);
    expect(plain.err).toBe(strict.err);
    expect(plain.code).toBe(0);
  });

  test("decode errors are reported with their line numbers and counted", () => {
    const status = join(tmp, "decode-status.json");
    const r = floe([HOT, "--strict", "--status", status], '{"temperature":30,"humidity":3}\n{"temperature":\n\n{"temperature":30,"humidity":0}\n');
    expect(r.out).toBe('{"r":10}\n');
    const lines = r.err.trimEnd().split("\n");
    expect(lines[0]).toMatch(/^floe: line 2: JSON Parse error: /);
    expect(lines.slice(1)).toEqual([`floe: line 4: ${DIV}`, "floe: 2 record(s) lost or rejected (1 decode error(s), 1 row error(s))"]);
    expect(r.code).toBe(3);
  });

  test("1,000 bad lines: ten in full, then a count; stderr stays a few lines", () => {
    const input = Array.from({ length: 1000 }, (_, i) => `{"temperature":${i},"humidity":0}\n`).join("");
    const r = floe([HOT, "--strict"], input);
    const lines = r.err.trimEnd().split("\n");
    expect(lines.slice(0, 10)).toEqual(Array.from({ length: 10 }, (_, i) => `floe: line ${i + 1}: ${DIV}`));
    expect(lines.slice(10)).toEqual([`floe: 990 more error(s) (last: line 1000: ${DIV})`, "floe: 10 of 1000 errors shown in full", "floe: 1000 record(s) lost or rejected (1000 row error(s))"]);
    expect(r.code).toBe(3);
  });

  test("an input that cannot be read stops the rule by error: exit 1 in both runners, the message on stderr", () => {
    const rule = file("r.json", JSON.stringify({ id: "r", sql: "SELECT * FROM s", actions: [{ nop: {} }] }));
    for (const r of [floe([HOT, "--input", tmp]), floe([rule, "--input", tmp])]) {
      expect(r.err).toMatch(/^floe: the rule stopped by error: EISDIR: /);
      expect(r.code).toBe(1);
    }
  });
});

describe("a streaming run over MQTT", () => {
  let broker: Mosquitto;
  beforeAll(async () => {
    broker = await Mosquitto.start();
  });
  afterAll(async () => {
    await broker.stop();
  });

  test("decode errors and row errors reach stderr with their source and topic; --strict exits 3", async () => {
    const rule = file("live.sql", `CREATE STREAM s () WITH (TYPE="mqtt", DATASOURCE="errs/+"); SELECT temperature / humidity AS r FROM s`);
    const p = Bun.spawn([process.execPath, join(ROOT, "cli.ts"), "run", rule, "--strict"], {
      cwd: tmp,
      env: { ...process.env, MQTT_SOURCE__DEFAULT__SERVER: broker.url },
      stdin: "ignore",
      stdout: "pipe",
      stderr: "pipe",
    });
    let out = "";
    let err = "";
    const pump = async (s: ReadableStream<Uint8Array>, add: (t: string) => void) => {
      const dec = new TextDecoder();
      for await (const chunk of s) add(dec.decode(chunk, { stream: true }));
    };
    const pumps = Promise.all([pump(p.stdout, (t) => void (out += t)), pump(p.stderr, (t) => void (err += t))]);
    const pub = await connectAsync({ host: "127.0.0.1", port: broker.port, protocol: "mqtt" });
    // The subscription is asynchronous: probe until the rule answers.
    await waitFor(() => {
      void pub.publishAsync("errs/probe", JSON.stringify({ temperature: 8, humidity: 2 }), { qos: 1 });
      return out.includes('{"r":4}');
    }, "the rule to subscribe");
    await pub.publishAsync("errs/garbled", "{not json", { qos: 1 });
    await pub.publishAsync("errs/dry", JSON.stringify({ temperature: 30, humidity: 0 }), { qos: 1 });
    await waitFor(() => err.includes("topic errs/dry"), "the row error on stderr");
    p.kill("SIGINT");
    const code = await p.exited;
    await pumps;
    const lines = err.trimEnd().split("\n");
    // The first line says the source is receiving; the errors follow.
    expect(lines[0]).toMatch(/^floe: source s: connected to mqtt:\/\/127\.0\.0\.1:\d+ \(MQTT 5\), subscribed to errs\/\+ at qos 1$/);
    expect(lines[1]).toMatch(/^floe: source s, topic errs\/garbled: invalid character in JSON payload: /);
    expect(lines[2]).toBe(`floe: source s, topic errs/dry: ${DIV}`);
    expect(lines[lines.length - 1]).toBe("floe: 2 record(s) lost or rejected (1 decode error(s), 1 row error(s))");
    expect(code).toBe(3);
    await pub.endAsync();
  }, 30_000);
});

describe("the compiled executable", () => {
  test("dist/floe reports the division by zero and exits 3 with --strict (run `make build` first)", () => {
    expect(existsSync(BIN)).toBe(true);
    const r = floe([HOT, "--strict"], '{"temperature":30,"humidity":0}\n{"temperature":30,"humidity":2}\n', [BIN]);
    expect(r.out).toBe('{"r":15}\n');
    expect(r.err).toBe(`floe: line 1: ${DIV}\nfloe: 1 record(s) lost or rejected (1 row error(s))\n`);
    expect(r.code).toBe(3);
  });
});
