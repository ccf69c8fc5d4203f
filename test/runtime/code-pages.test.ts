import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { cleanCodeRanges, codeTrimPeriod } from "../../lib/runtime/code-pages.ts";

const ROOT = join(import.meta.dir, "../..");

/** One smaps entry: header and the two fields the parser reads. */
const entry = (range: string, perms: string, path: string, rss: number, anon: number) =>
  `${range} ${perms} 00000000 fe:00 42                         ${path}\nSize:               8192 kB\nRss:                ${rss} kB\nPss:                ${rss} kB\nAnonymous:          ${anon} kB\nVmFlags: rd mr mw me\n`;

describe("cleanCodeRanges", () => {
  test("keeps the executable's read-only mappings without written pages, and nothing else", () => {
    const smaps = [
      entry("00200000-01a39000", "r--p", "/usr/bin/floe", 4580, 0),
      entry("01a40000-0684a000", "r-xp", "/usr/bin/floe", 20616, 0),
      // relocated pointers (RELRO): written while writable, read-only now
      entry("0685f000-06867000", "r--p", "/usr/bin/floe", 32, 12),
      // the writable section of the bundle
      entry("06867000-06a23000", "rw-p", "/usr/bin/floe", 740, 112),
      // not resident: nothing to advise
      entry("06a23000-06a24000", "r--p", "/usr/bin/floe", 0, 0),
      entry("7f0000000000-7f0000100000", "r-xp", "/usr/lib/x86_64-linux-gnu/libc.so.6", 1200, 0),
      entry("7f1000000000-7f1040000000", "rw-p", "", 35000, 35000),
    ].join("");
    expect(cleanCodeRanges(smaps, "/usr/bin/floe")).toEqual([
      { start: 0x200000, length: 0x1a39000 - 0x200000, rssKb: 4580 },
      { start: 0x1a40000, length: 0x684a000 - 0x1a40000, rssKb: 20616 },
    ]);
  });

  test("a mapping whose anonymous count is missing is not advised", () => {
    const smaps = "00400000-00500000 r-xp 00000000 fe:00 42    /usr/bin/floe\nRss:   64 kB\n";
    expect(cleanCodeRanges(smaps, "/usr/bin/floe")).toEqual([]);
  });
});

describe("trimCodePages", () => {
  test("drops the runtime's clean code pages from the resident set, and the process keeps running", async () => {
    // A child process: it trims its own executable (bun), then runs code that needs those pages again.
    const script = `
      const { trimCodePages } = await import(${JSON.stringify(join(ROOT, "lib/runtime/code-pages.ts"))});
      const file = () => Number(/RssFile:\\s+(\\d+)/.exec(require("node:fs").readFileSync("/proc/self/status", "utf8"))[1]);
      const before = file();
      const kb = trimCodePages();
      const after = file();
      const again = JSON.stringify(JSON.parse(JSON.stringify({ a: [1, 2, 3], b: "x".repeat(1000) }))).length;
      const re = /(\\d+)-(\\w+)/.exec("12-ab")[2];
      console.log(JSON.stringify({ before, kb, after, again, re }));
    `;
    const p = Bun.spawn([process.execPath, "-e", script], { stdout: "pipe", stderr: "pipe" });
    try {
      const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
      expect(err).toBe("");
      expect(code).toBe(0);
      const r = JSON.parse(out) as { before: number; kb: number; after: number; again: number; re: string };
      expect(r.kb).toBeGreaterThan(1024);
      expect(r.after).toBeLessThan(r.before - 1024);
      expect(r.again).toBe(1020);
      expect(r.re).toBe("ab");
    } finally {
      p.kill();
    }
  });
});

describe("FLOE_CODE_TRIM_S", () => {
  test("defaults to 60 s; 0 turns the trim off; anything else that is not a number of seconds keeps the default", () => {
    expect(codeTrimPeriod(undefined)).toBe(60);
    expect(codeTrimPeriod("")).toBe(60);
    expect(codeTrimPeriod("0")).toBe(0);
    expect(codeTrimPeriod("15")).toBe(15);
    expect(codeTrimPeriod("soon")).toBe(60);
    expect(codeTrimPeriod("-1")).toBe(60);
  });
});
