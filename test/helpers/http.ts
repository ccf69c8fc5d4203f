/** A real HTTP endpoint on a free loopback port that a test takes down and brings back up. */
import type { Server } from "bun";
import { freePort } from "./mosquitto.ts";

export class HttpCollector {
  /** Every request body received, in arrival order. */
  readonly raw: string[] = [];
  private server: Server<undefined> | undefined;
  constructor(readonly port: number) {}

  static async create(): Promise<HttpCollector> {
    return new HttpCollector(await freePort());
  }

  /** The `n` field of every JSON body received. */
  get bodies(): number[] {
    return this.raw.map((b) => (JSON.parse(b) as { n: number }).n);
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}/`;
  }

  up(): void {
    this.server = Bun.serve({
      port: this.port,
      hostname: "127.0.0.1",
      fetch: async (req) => {
        this.raw.push(await req.text());
        return new Response("ok");
      },
    });
  }

  down(): void {
    this.server?.stop(true);
    this.server = undefined;
  }
}
