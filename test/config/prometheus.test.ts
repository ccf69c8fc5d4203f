/** `basic.prometheus` as eKuiper documents it: enabling it alone serves /metrics on 20499. */
import { expect, test } from "bun:test";
import { loadKuiperConfig } from "../../lib/config/kuiper.ts";

test("KUIPER__BASIC__PROMETHEUS=true without a port uses eKuiper's default 20499", async () => {
  const c = await loadKuiperConfig(undefined, { KUIPER__BASIC__PROMETHEUS: "true" });
  expect(c.basic.prometheus).toBe(true);
  expect(c.basic.prometheusPort).toBe(20499);
});

test("an explicit prometheusPort of 0 with prometheus on is eKuiper's fatal error", async () => {
  await expect(loadKuiperConfig(undefined, { KUIPER__BASIC__PROMETHEUS: "true", KUIPER__BASIC__PROMETHEUSPORT: "0" })).rejects.toThrow(
    "Miss configuration prometheusPort",
  );
});
