/**
 * `floe run -C N` / `--timeout D` end a live run by themselves with exit 0 (as `mosquitto_sub -C/-W`):
 * over a standard input that stays open, and over a real MQTT stream.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connectAsync } from "mqtt";
import { Mosquitto } from "../helpers/mosquitto.ts";
import { waitFor } from "../helpers/runtime.ts";

const ROOT = join(import.meta.dir, "../..");
const tmp = mkdtempSync(join(tmpdir(), "floe-limits-"));

function file(name: string, text: string): string {
  const p = join(tmp, name);
  writeFileSync(p, text);
  return p;
}

/** `floe run` with a standard input the test keeps open: the run can only end by its limit. */
async function runOpen(args: string[], lines: string[], env: Record<string, string> = {}) {
  const p = Bun.spawn([process.execPath, join(ROOT, "cli.ts"), "run", ...args], { cwd: tmp, env: { ...process.env, ...env }, stdin: "pipe", stdout: "pipe", stderr: "pipe" });
  try {
    for (const l of lines) p.stdin.write(l + "\n");
    await p.stdin.flush();
    const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
    return { out, err, code };
  } finally {
    p.kill();
  }
}

describe("over standard input that stays open", () => {
  const rule = file("a.sql", "SELECT a FROM demo");

  test("-C 2 prints two results and exits 0", async () => {
    expect(await runOpen([rule, "-C", "2"], ['{"a":1}', '{"a":2}', '{"a":3}'])).toEqual({ out: '{"a":1}\n{"a":2}\n', err: "", code: 0 });
  }, 20_000);

  test("-C counts emissions with --emit array", async () => {
    expect(await runOpen([rule, "-C", "1", "--emit", "array"], ['{"a":1}'])).toEqual({ out: '[{"a":1}]\n', err: "", code: 0 });
  }, 20_000);

  test("--timeout ends the run as end of input would: open windows are emitted", async () => {
    const win = file("w.sql", "SELECT count(*) AS n FROM demo GROUP BY TUMBLINGWINDOW(ss, 3600)");
    expect(await runOpen([win, "--timeout", "300ms"], ['{"a":1}', '{"a":2}'])).toEqual({ out: '{"n":2}\n', err: "", code: 0 });
  }, 20_000);

  test("bad values are usage errors", async () => {
    for (const [args, msg] of [
      [["-C", "0"], 'floe: -C must be a whole number of results greater than 0 (got "0")\n'],
      [["--timeout", "soon"], 'floe: --timeout must be a duration such as 30s, 1m or 500ms, or a number of seconds (got "soon")\n'],
    ] as const) {
      const p = Bun.spawnSync([process.execPath, join(ROOT, "cli.ts"), "run", rule, ...args], { cwd: tmp });
      expect({ code: p.exitCode, err: p.stderr.toString() }).toEqual({ code: 2, err: msg });
    }
  });

  test("--help teaches -C and --timeout", () => {
    const h = Bun.spawnSync([process.execPath, join(ROOT, "cli.ts"), "run", "--help"]).stdout.toString();
    expect(h).toContain("-C, --count N");
    expect(h).toContain("--timeout D");
    expect(h).toContain("floe run mqtt-rule.sql -C 5 --timeout 30s");
  });
});

describe("over a live MQTT stream", () => {
  let broker: Mosquitto;
  beforeAll(async () => {
    broker = await Mosquitto.start();
  });
  afterAll(async () => {
    await broker.stop();
  });

  test("-C 3 stops after three results, closes its client and exits 0", async () => {
    const rule = file("mqtt.sql", 'CREATE STREAM s () WITH (TYPE="mqtt", DATASOURCE="limits/+"); SELECT n FROM s');
    const p = Bun.spawn([process.execPath, join(ROOT, "cli.ts"), "run", rule, "-C", "3"], {
      cwd: tmp,
      env: { ...process.env, MQTT_SOURCE__DEFAULT__SERVER: broker.url },
      stdin: "ignore",
      stdout: "pipe",
      stderr: "pipe",
    });
    const pub = await connectAsync({ host: "127.0.0.1", port: broker.port, protocol: "mqtt" });
    try {
      let out = "";
      const pump = (async () => {
        const dec = new TextDecoder();
        for await (const chunk of p.stdout) out += dec.decode(chunk, { stream: true });
      })();
      let n = 0;
      let exited: number | undefined;
      void p.exited.then((c) => (exited = c));
      // The subscription is asynchronous: publish until the rule has answered three times and ended.
      await waitFor(() => {
        if (exited === undefined) void pub.publishAsync("limits/x", JSON.stringify({ n: n++ }), { qos: 1 });
        return exited !== undefined;
      }, "the run to end after three results", 15_000, 50);
      await pump;
      expect(exited).toBe(0);
      expect(out.trimEnd().split("\n").length).toBe(3);
    } finally {
      p.kill();
      await pub.endAsync();
    }
  }, 30_000);
});
