/**
 * Headless Chromium (Debian's `chromium`) driven by playwright-core, with a fresh profile, for the
 * web console's tests. Every console error, page error, failed request and HTTP error answer is
 * recorded; a test expects the list empty, after removing the ones it caused on purpose.
 * Screenshots go to test/server/console/screenshots/ (gitignored: each run makes them afresh).
 */
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium, type BrowserContext, type Page } from "playwright-core";

const ROOT = join(import.meta.dir, "..", "..");
export const ARTIFACTS = join(ROOT, "test", "server", "console", "screenshots");

/** The system browser, or undefined (the test then says loudly what to install). */
export function chromiumPath(): string | undefined {
  return ["/usr/bin/chromium", "/usr/bin/chromium-browser"].find((p) => Bun.file(p).size > 0);
}

export const NO_BROWSER = "chromium is not installed: `apt-get install -y chromium` (.ci/run installs it); the web console's browser tests cannot run";

const FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"];

export interface Browser {
  readonly page: Page;
  /** Problems seen so far: console errors, page errors, failed requests, answers ≥ 400. */
  readonly problems: string[];
  /** The whole page, or the `clip` rectangle, into test/server/console/screenshots/<name>.png. */
  screenshot(name: string, clip?: { x: number; y: number; width: number; height: number }): Promise<void>;
  close(): Promise<void>;
  /** Another page in the same browser, with problems of its own (a launch costs seconds; a page, little). */
  newPage(opts?: { dark?: boolean }): Promise<Browser>;
}

export async function openBrowser(opts: { dark?: boolean } = {}): Promise<Browser> {
  const exe = chromiumPath();
  if (!exe) throw new Error(NO_BROWSER);
  const profile = mkdtempSync(join(tmpdir(), "floe-chromium-"));
  const ctx: BrowserContext = await chromium.launchPersistentContext(profile, {
    executablePath: exe,
    headless: true,
    args: FLAGS,
    viewport: { width: 1280, height: 860 },
    colorScheme: opts.dark ? "dark" : "light",
  });
  mkdirSync(ARTIFACTS, { recursive: true });
  return watch(ctx, ctx.pages()[0] ?? (await ctx.newPage()), async () => {
    await ctx.close();
    rmSync(profile, { recursive: true, force: true });
  });
}

/** `page` with its problems recorded; `close` ends it (the browser, for the first page). */
function watch(ctx: BrowserContext, page: Page, close: () => Promise<void>): Browser {
  const problems: string[] = [];
  page.on("console", (m) => {
    if (m.type() === "error") problems.push(`console error: ${m.text()}`);
  });
  page.on("pageerror", (e) => problems.push(`page error: ${e.message}`));
  page.on("requestfailed", (r) => {
    // A live stream the page closes itself (leaving a page, stopping a trial) ends as aborted.
    const aborted = r.failure()?.errorText === "net::ERR_ABORTED";
    if (!(aborted && /\/ui\/events|\/test\//.test(r.url()))) problems.push(`request failed: ${r.method()} ${r.url()} ${r.failure()?.errorText}`);
  });
  page.on("response", (r) => {
    if (r.status() >= 400) problems.push(`HTTP ${r.status()}: ${r.request().method()} ${r.url()}`);
  });
  return {
    page,
    problems,
    screenshot: async (name, clip) => void (await page.screenshot({ path: join(ARTIFACTS, `${name}.png`), ...(clip ? { clip } : { fullPage: true }) })),
    close,
    newPage: async (opts = {}) => {
      const p = await ctx.newPage();
      if (opts.dark) await p.emulateMedia({ colorScheme: "dark" });
      return watch(ctx, p, () => p.close());
    },
  };
}
