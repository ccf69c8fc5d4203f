/**
 * Per-request cost of the private-network guard (lib/net/guard.ts) with the connection itself
 * replaced by a constant response: what the guard adds to each REST sink / httppull request.
 *   node_modules/.bin/bun bench/net-guard.ts [requests]
 */
import { createNetGuard, guardedFetch, systemResolve, type NetGuard } from "../lib/net/guard.ts";

const N = Number(process.argv[2] ?? 100_000);
const ok = new Response("x");
const connect = async () => ok;
const init = () => ({ method: "POST", body: "{}", headers: { "Content-Type": "application/json" } });

async function run(name: string, url: string, g: NetGuard): Promise<void> {
  for (let i = 0; i < 2000; i++) await guardedFetch(url, init(), g);
  const t = performance.now();
  for (let i = 0; i < N; i++) await guardedFetch(url, init(), g);
  console.log(`${name.padEnd(48)} ${(((performance.now() - t) * 1000) / N).toFixed(2)} µs/request`);
}

await run("enablePrivateNet (plain fetch)", "http://127.0.0.1:9/x", createNetGuard({ allowPrivate: true, fetch: connect }));
await run("guarded, IP literal", "http://8.8.8.8:9/x", createNetGuard({ fetch: connect }));
await run("guarded, name (checked addresses reused)", "http://api.example:9/x", createNetGuard({ fetch: connect, resolve: async () => ["93.184.216.34"] }));
// What every request would pay without the reuse: getaddrinfo through Bun's cached lookup.
const t = performance.now();
for (let i = 0; i < 10_000; i++) await systemResolve("localhost");
console.log(`${"getaddrinfo(localhost), Bun-cached".padEnd(48)} ${(((performance.now() - t) * 1000) / 10_000).toFixed(2)} µs/lookup`);
