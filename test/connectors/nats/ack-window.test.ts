import { expect, setSystemTime, test } from "bun:test";
import { AckWindow } from "../../../lib/connectors/nats/ack-window.ts";
import { JsDelivery, type PullReader } from "../../../lib/connectors/nats/consumer.ts";

/** Records what would be sent to the server (the reader's publish side only). */
function recorder(): { reader: PullReader; sent: string[] } {
  const sent: string[] = [];
  const reader = {
    ack: (d: JsDelivery) => void sent.push(`ack ${d.seq}`),
    nak: (d: JsDelivery) => void sent.push(`nak ${d.seq}`),
    working: (d: JsDelivery) => void sent.push(`wpi ${d.seq}`),
  } as unknown as PullReader;
  return { reader, sent };
}

const d = (seq: number) => new JsDelivery("s", new Uint8Array(), undefined, `$JS.ACK.S.C.1.${seq}.${seq}.0.0`, seq, 1, 0, 0);

test("acknowledges positions in admission order, each once; ackPolicy all sends only the last", () => {
  const { reader, sent } = recorder();
  const w = new AckWindow(false);
  w.admit([d(3), d(5), d(8)]);
  expect([w.holds(5), w.pending]).toEqual([true, 3]);
  w.ackThrough(2, reader);
  w.ackThrough(2, reader);
  expect(sent).toEqual(["ack 3", "ack 5"]);
  expect([w.holds(5), w.holds(8), w.pending, w.takenSeq]).toEqual([false, true, 1, 5]);
  const all = recorder();
  const wa = new AckWindow(true);
  wa.admit([d(1), d(2), d(3)]);
  wa.ackThrough(3, all.reader);
  expect(all.sent).toEqual(["ack 3"]);
});

test("a checkpoint mark covers what was consumed when its offset was read; release gives the rest back", () => {
  const { reader, sent } = recorder();
  const w = new AckWindow(false);
  w.admit([d(10), d(11), d(12), d(13)]);
  // Two still wait in the rule's queue.
  expect(w.markConsumed(2)).toBe(11);
  w.admit([d(14)]);
  w.keepAlive(reader);
  w.ackMark(reader);
  expect(w.takenSeq).toBe(11);
  w.release(reader);
  expect(sent).toEqual(["wpi 10", "wpi 11", "wpi 12", "wpi 13", "wpi 14", "ack 10", "ack 11", "nak 12", "nak 13", "nak 14"]);
  expect(w.pending).toBe(0);
});

test("a redelivery admitted below the sequences held: still known as held, and AckAll acknowledges the highest sequence of the run", () => {
  const { reader, sent } = recorder();
  const w = new AckWindow(true);
  w.admit([d(10), d(11), d(12)]);
  expect([w.holds(9), w.holds(10), w.holds(11), w.holds(12), w.holds(13)]).toEqual([false, true, true, true, false]);
  // Sequence 4 comes back (redelivered) after 12: the window is no longer in stream order.
  w.admit([d(4), d(13)]);
  expect([w.holds(4), w.holds(12), w.holds(13), w.holds(5)]).toEqual([true, true, true, false]);
  expect(w.markConsumed(1)).toBe(12);
  w.ackMark(reader);
  expect(sent).toEqual(["ack 12"]);
  expect([w.holds(4), w.holds(12), w.holds(13), w.takenSeq, w.pending]).toEqual([false, false, true, 12, 1]);
  w.ackThrough(w.admitted, reader);
  expect(sent).toEqual(["ack 12", "ack 13"]);
  // Emptied: in order again, and what it held is forgotten.
  w.admit([d(20), d(21)]);
  expect([w.holds(13), w.holds(20), w.holds(21), w.pending]).toEqual([false, true, true, 2]);
});

test("holds() over many deliveries in order, after partial acknowledgements and compaction", () => {
  const { reader } = recorder();
  const w = new AckWindow(false);
  w.admit(Array.from({ length: 3000 }, (_, i) => d(2 * i + 1)));
  w.ackThrough(2000, reader);
  expect([w.holds(3999), w.holds(4001), w.holds(4000), w.holds(5999), w.holds(6001)]).toEqual([false, true, false, true, false]);
  expect(w.takenSeq).toBe(3999);
});

test("keepAlive(before) refreshes only the waiting deliveries whose ackWait timer started at that time or earlier, and restarts their timer", () => {
  const { reader, sent } = recorder();
  const w = new AckWindow(true);
  try {
    setSystemTime(new Date(1_004_000));
    // Delivered at 1,000,000 and 1,002,000 (admitted later: they waited in the reader), and now.
    w.admit([d(1), d(2)], 1_000_000);
    w.admit([d(3)], 1_002_000);
    w.admit([d(4), d(5)]);
    w.keepAlive(reader, 999_000);
    expect(sent).toEqual([]);
    // Timers started at 1,002,500 or earlier: the first two batches.
    w.keepAlive(reader, 1_002_500);
    expect(sent).toEqual(["wpi 1", "wpi 2", "wpi 3"]);
    sent.length = 0;
    // Their timers started again at 1,004,000, as the third batch's did: none started before.
    setSystemTime(new Date(1_006_000));
    w.keepAlive(reader, 1_004_000 - 1);
    expect(sent).toEqual([]);
    w.keepAlive(reader, 1_004_000);
    expect(sent).toEqual(["wpi 1", "wpi 2", "wpi 3", "wpi 4", "wpi 5"]);
    sent.length = 0;
    // The first batch and half the third acknowledged: what is left of the rest.
    w.ackThrough(4, reader);
    sent.length = 0;
    w.keepAlive(reader);
    expect(sent).toEqual(["wpi 5"]);
  } finally {
    setSystemTime();
  }
});
