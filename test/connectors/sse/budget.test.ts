/**
 * What an SSE endpoint (an `sse` sink, a trial run's `/test/<id>`) queues for a client is bounded
 * in bytes: a client that connects and stops reading loses events, counted, while the daemon's
 * memory stays flat; a client that reads gets every event.
 */
import { expect, test } from "bun:test";
import { heapStats } from "bun:jsc";
import { connect } from "node:net";
import { DataServer } from "../../../lib/connectors/http/server.ts";
import { waitFor } from "../../helpers/runtime.ts";

test("a client that stops reading: events past its byte budget are dropped and counted, the heap stays flat", async () => {
  const ds = new DataServer({ hostname: "127.0.0.1", port: 0 });
  const hub = ds.acquireSse("/test/t1");
  const sock = connect(ds.port, "127.0.0.1");
  try {
    await new Promise<void>((ok) => sock.once("connect", () => ok()));
    let head = "";
    sock.on("data", (d) => void (head += d.toString()));
    sock.write("GET /test/t1 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
    await waitFor(() => head.includes("text/event-stream") && hub.size === 1, "the client subscribed");
    // The client reads nothing more: the kernel's buffers fill, then the stream's queue.
    sock.pause();
    Bun.gc(true);
    const before = heapStats().heapSize;
    const event = "e".repeat(64 * 1024);
    // 64 MB of events, in turns so the server can write what the socket takes.
    for (let i = 0; i < 1024; i++) {
      hub.publish(event);
      if (i % 64 === 63) await Bun.sleep(1);
    }
    Bun.gc(true);
    const grown = heapStats().heapSize - before;
    expect(hub.dropped).toBeGreaterThan(700);
    expect(grown).toBeLessThan(hub.maxBytes + 8 * 1024 * 1024);
  } finally {
    sock.destroy();
    ds.releaseSse("/test/t1", hub);
  }
});

test("a client that reads gets every event", async () => {
  const ds = new DataServer({ hostname: "127.0.0.1", port: 0 });
  const hub = ds.acquireSse("/test/t2");
  try {
    const res = await fetch(`http://127.0.0.1:${ds.port}/test/t2`);
    const reader = res.body!.getReader();
    await waitFor(() => hub.size === 1, "the client subscribed");
    for (let i = 0; i < 100; i++) hub.publish(`{"i":${i}}`);
    let text = "";
    const dec = new TextDecoder();
    while ((text.match(/data: /g) ?? []).length < 100) text += dec.decode((await reader.read()).value);
    expect(hub.dropped).toBe(0);
    await reader.cancel();
  } finally {
    ds.releaseSse("/test/t2", hub);
  }
});
