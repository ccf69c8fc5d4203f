/**
 * The stage every browser test of the console plays on: a real Mosquitto, an MQTT client to feed
 * it, `floe serve` reading from it, and headless Chromium; set up before the file's tests and
 * torn down after them. Without a browser every test fails with the install line (never a silent skip).
 */
import { afterAll, beforeAll } from "bun:test";
import mqtt from "mqtt";
import { chromiumPath, NO_BROWSER, openBrowser, type Browser } from "../../helpers/browser.ts";
import { Mosquitto } from "../../helpers/mosquitto.ts";
import { startFloe, tempHome, type DaemonProc } from "../daemon.ts";

export interface ConsoleStage {
  broker: Mosquitto;
  client: mqtt.MqttClient;
  d: DaemonProc;
  b: Browser;
  /** A publishing timer a test starts; cleared at the end if the test left it running. */
  feeder: ReturnType<typeof setInterval> | undefined;
  /** Problems the test did not cause on purpose (e.g. the 4xx answers of saves it expects to fail). */
  unexpected(allowed?: RegExp[]): string[];
}

export function consoleStage(): ConsoleStage {
  const s = {
    feeder: undefined,
    unexpected(allowed: RegExp[] = []): string[] {
      return s.b.problems.filter((p) => !allowed.some((a) => a.test(p)));
    },
  } as unknown as ConsoleStage;
  beforeAll(async () => {
    if (chromiumPath() === undefined) throw new Error(NO_BROWSER);
    s.broker = await Mosquitto.start();
    s.client = await mqtt.connectAsync(s.broker.url.replace("tcp:", "mqtt:"));
    s.d = await startFloe(tempHome(), { MQTT_SOURCE__DEFAULT__SERVER: s.broker.url });
    s.b = await openBrowser();
  }, 60_000);
  afterAll(async () => {
    if (s.feeder) clearInterval(s.feeder);
    await s.b?.close();
    await s.d?.stop();
    await s.client?.endAsync();
    await s.broker?.stop();
  });
  return s;
}
