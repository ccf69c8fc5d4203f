/**
 * Start-up loads only what a command needs: subcommands, the kuiper client, the streaming
 * runner with its connectors, node:zlib, re2js and protobufjs load at their first use, through
 * import() or require(). These prove that each still loads, from `cli.ts` and from the compiled
 * executable (make build: split into chunks, `--splitting`), which must carry every chunk and asset.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connectAsync } from "mqtt";
import protobuf from "protobufjs";
import { KUIPER_VERBS } from "../../lib/cli/kuiper/index.ts";
import { Mosquitto } from "../helpers/mosquitto.ts";
import { waitFor } from "../helpers/runtime.ts";
import { startFloe, tempHome } from "../server/daemon.ts";

const ROOT = join(import.meta.dir, "../..");
const BIN = join(ROOT, "dist/floe");
const SRC = [process.execPath, join(ROOT, "cli.ts")];
const tmp = mkdtempSync(join(tmpdir(), "floe-lazy-"));
const COMMANDS = ["run", "test", "check", "serve", "completion", ...KUIPER_VERBS];

function floe(exe: string[], args: string[], stdin = "", env: Record<string, string> = {}): { code: number; out: string; err: string } {
  const p = Bun.spawnSync([...exe, ...args], { cwd: tmp, stdin: Buffer.from(stdin), env: { ...process.env, ...env } });
  return { code: p.exitCode ?? -1, out: p.stdout.toString(), err: p.stderr.toString() };
}

test("dist/floe exists (run `make build` first; `make test` does)", () => {
  expect(existsSync(BIN)).toBe(true);
});

describe("help", () => {
  test("floe --help lists every command; the executable prints the same bytes as cli.ts", () => {
    const src = floe(SRC, ["--help"]);
    expect(src.code).toBe(0);
    for (const c of COMMANDS) expect(src.out).toContain(`  ${c} `);
    expect(floe([BIN], ["--help"])).toEqual(src);
  });

  test.each(COMMANDS)("floe %s --help and floe help %s: examples, no server needed, the same from the executable as from cli.ts", (c) => {
    // Port 1: the kuiper verbs' help must not need a server.
    const src = floe(SRC, [c, "--help"], "", { CLIENT__BASIC__PORT: "1" });
    expect(src.code).toBe(0);
    expect(src.out).toStartWith(`floe ${c} — `);
    expect(src.out).toContain("Usage: floe ");
    expect(src.out).toMatch(/Examples:\n {2}\S/);
    expect(floe([BIN], [c, "--help"])).toEqual(src);
    expect(floe([BIN], ["help", c])).toEqual(src);
  });
});

describe("pipe mode, from the executable", () => {
  const rule = join(tmp, "lazy.sql");
  writeFileSync(
    rule,
    'SELECT regexp_substr(s, "[0-9]+") AS digits, regexp_matches(s, "^a.c") AS m, crc32(s) AS crc,\n' +
      '  cast(decompress(compress(t, "gzip"), "gzip"), "string") = t AS gz, cast(decompress(compress(t, "zstd"), "zstd"), "string") = t AS zstd\n' +
      "FROM demo\n",
  );
  // Over 128 bytes: compress goes through node:zlib's deflate rather than stored blocks.
  const long = "0123456789 ".repeat(20);
  const line = JSON.stringify({ s: "abc123def", t: long }) + "\n";
  const want = '{"crc":"805d2025","digits":"123","gz":true,"m":true,"zstd":true}\n';

  test("regexes (re2js) and compress, decompress and crc32 (node:zlib) load at their first call", () => {
    const src = floe(SRC, ["run", rule], line);
    expect(src).toEqual({ code: 0, out: want, err: "" });
    expect(floe([BIN], ["run", rule], line)).toEqual(src);
  });

  test("a replayed protobuf payload loads the codec (protobufjs) from the executable", () => {
    const BOOK = 'syntax = "proto3";\nmessage Book { int64 id = 1; string title = 2; }\n';
    const Book = protobuf.parse(BOOK, { keepCase: true }).root.lookupType("Book");
    const payload = Buffer.from(Book.encode({ id: "9007199254740993", title: "Dune" }).finish()).toString("base64");
    mkdirSync(join(tmp, "etc", "schemas", "protobuf"), { recursive: true });
    writeFileSync(join(tmp, "etc", "schemas", "protobuf", "book.proto"), BOOK);
    const pb = join(tmp, "pb.sql");
    writeFileSync(pb, 'CREATE STREAM books () WITH (FORMAT="protobuf", SCHEMAID="book.Book");\nSELECT id, title FROM books;\n');
    const r = floe([BIN], ["run", pb, "--replay", "--etc", join(tmp, "etc")], `{"ts":1,"raw":"${payload}"}\n`);
    expect(r).toEqual({ code: 0, out: '{"id":9007199254740993,"title":"Dune"}\n', err: "" });
  });
});

describe("connectors and the kuiper client, from the executable", () => {
  let broker: Mosquitto;
  beforeAll(async () => {
    broker = await Mosquitto.start();
  });
  afterAll(async () => {
    await broker.stop();
  });

  test("a rule over an MQTT stream loads the streaming runner and the MQTT client", async () => {
    const rule = join(tmp, "mqtt.sql");
    writeFileSync(rule, 'CREATE STREAM s () WITH (TYPE="mqtt", DATASOURCE="lazy/+");\nSELECT meta(topic) AS topic, v * 2 AS w FROM s\n');
    const p = Bun.spawn([BIN, "run", rule], { cwd: tmp, env: { ...process.env, MQTT_SOURCE__DEFAULT__SERVER: broker.url }, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
    let out = "";
    const pump = (async () => {
      const dec = new TextDecoder();
      for await (const chunk of p.stdout) out += dec.decode(chunk, { stream: true });
    })();
    const pub = await connectAsync({ host: "127.0.0.1", port: broker.port, protocol: "mqtt" });
    try {
      // The subscription is asynchronous: publish until the rule answers.
      await waitFor(() => {
        void pub.publishAsync("lazy/a", '{"v":21}', { qos: 1 });
        return out.includes("\n");
      }, "the rule to subscribe");
      expect(out.split("\n")[0]).toBe('{"topic":"lazy/a","w":42}');
    } finally {
      p.kill("SIGINT");
      expect(await p.exited).toBe(0);
      await pump;
      await pub.endAsync();
    }
  }, 30_000);

  test("the daemon from the executable serves the web console, loaded at the first /ui request, with its script", async () => {
    const d = await startFloe(tempHome(), {}, [], [BIN]);
    try {
      const page = await fetch(`${d.base}/ui`);
      expect(page.status).toBe(200);
      expect(await page.text()).toContain('<script type="module" src="/ui/app.js"></script>');
      const app = await fetch(`${d.base}/ui/app.js`);
      expect(app.status).toBe(200);
      expect(await app.text()).toBe(readFileSync(join(ROOT, "generated/console/app.js"), "utf8"));
    } finally {
      await d.stop("SIGKILL");
    }
  }, 30_000);

  test("`floe show streams` and the executable invoked as `kuiper` load the client", async () => {
    const d = await startFloe(tempHome(), {}, [], [BIN]);
    try {
      expect((await d.call("POST", "/streams", { sql: 'CREATE STREAM lazy () WITH (DATASOURCE="lazy", FORMAT="json")' })).status).toBe(201);
      const env = { CLIENT__BASIC__PORT: String(d.cliPort) };
      const head = `Connecting to 127.0.0.1:${d.cliPort}... \n`;
      // Under the name floe the connection line goes to stderr; as `kuiper` all of it to stdout (eKuiper's).
      expect(floe([BIN], ["show", "streams"], "", env)).toEqual({ code: 0, out: "lazy\n\n", err: head });
      const shown = { code: 0, out: `${head}lazy\n\n`, err: "" };
      const bin = join(tmp, "bin");
      mkdirSync(bin, { recursive: true });
      if (!existsSync(join(bin, "kuiper"))) symlinkSync(BIN, join(bin, "kuiper"));
      expect(floe([join(bin, "kuiper")], ["show", "streams"], "", env)).toEqual(shown);
    } finally {
      await d.stop("SIGKILL");
    }
  }, 30_000);
});
