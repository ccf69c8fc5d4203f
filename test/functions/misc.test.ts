import { describe, expect, test } from "bun:test";
import type { Value } from "../../lib/value/values.ts";
import { setKeyedStateReader, snowflake, uuidV1 } from "../../lib/functions/misc.ts";
import type { Expr } from "../../lib/sql/ast.ts";
import { call, col, int, num, str, unit, validate } from "./invoke-helpers.ts";
import { testEnv } from "./env.ts";

type Case = [name: string, args: Value[], want: Value | { err: string }];
const err = (fn: string, m: string) => ({ err: `call func ${fn} error: ${m}` });

const cases: Case[] = [
  ["tstamp", [], BigInt(testEnv.now())],
  ["rule_id", [], "rule1"],
  ["rule_start", [], BigInt(testEnv.ruleStart)],
  ["props", [12n], err("props", "invalid input 12: must be property name of string type")],
  ["props", ["et"], String(testEnv.now())],
  ["props", ["no_such_property"], err("props", "")],
  ["props", [null], null],
  ["delay", [10n, "bar"], "bar"],
  ["delay", [0n, 1n], 1n],
  ["delay", [null, "x"], null],
  ["delay", ["a", "x"], err("delay", "cannot convert string(a) to int")],
  ["bypass", [null], null],
  ["bypass", [[1n]], [1n]],
  ["get_keyed_state", ["missing", "bigint", 5n], 5n],
  ["get_keyed_state", [1n, "bigint", 5n], err("get_keyed_state", "key 1 is not a string")],
];

describe("misc functions", () => {
  test.each(cases)("%s(%p)", (name, args, want) => {
    expect(call(name, args)).toEqual(want);
  });

  test("get_keyed_state converts a stored value with the cast rules", () => {
    setKeyedStateReader((k) => (k === "n" ? "42" : k === "bad" ? "x" : undefined));
    try {
      expect(call("get_keyed_state", ["n", "bigint", 0n])).toBe(42n);
      expect(call("get_keyed_state", ["other", "float", "dflt"])).toBe("dflt");
      expect(call("get_keyed_state", ["bad", "bigint", 0n])).toEqual(
        err("get_keyed_state", "not supported type conversion, got error cannot convert string(x) to int"),
      );
    } finally {
      setKeyedStateReader(() => undefined);
    }
  });

  test("newuuid gives distinct version-1 UUIDs even on a frozen clock", () => {
    const a = call("newuuid", []) as string;
    const b = call("newuuid", []) as string;
    expect(a).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-1[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(b).not.toBe(a);
  });

  test("uuidV1 carries the 60-bit timestamp", () => {
    const u = uuidV1(Date.UTC(2030, 0, 1));
    const [low, mid, hi] = u.split("-");
    const t = (BigInt("0x" + hi!.slice(1)) << 48n) | (BigInt("0x" + mid!) << 32n) | BigInt("0x" + low!);
    expect((t - 122192928000000000n) / 10000n).toBe(BigInt(Date.UTC(2030, 0, 1)));
  });

  test("snowflake ids follow bwmarrin's layout with node 1", () => {
    const ms = Date.UTC(2031, 0, 1);
    const a = BigInt(snowflake(ms));
    const b = BigInt(snowflake(ms));
    expect(a >> 22n).toBe(BigInt(ms) - 1288834974657n);
    expect((a >> 12n) & 1023n).toBe(1n);
    expect(b).toBe(a + 1n);
  });

});

type VCase = [name: string, args: Expr[], want: string | undefined];

const validators: VCase[] = [
  ["newuuid", [col("a")], "Expect 0 arguments but found 1."],
  ["tstamp", [], undefined],
  ["rule_start", [int(1)], "Expect 0 arguments but found 1."],
  ["props", [int(12)], "Expect string type for parameter 1"],
  ["delay", [str("1s"), str("1s")], "Expect number - float or int type for parameter 1"],
  ["delay", [int(1000), str("1s")], undefined],
  ["delay", [num(1.5)], "Expect 2 arguments but found 1."],
  ["get_keyed_state", [str("foo")], "Expect 3 arguments but found 1."],
  ["get_keyed_state", [str("foo"), str("bar")], "Expect 3 arguments but found 2."],
  ["get_keyed_state", [str("foo"), str("barz"), str("x")], "expect one of following value for the 2nd parameter: bigint, float, string, boolean, datetime"],
  ["get_keyed_state", [str("foo"), unit("SS"), str("x")], "Expect string type for parameter 1"],
  ["get_keyed_state", [col("k"), str("bigint"), int(0)], undefined],
];

describe("misc validators", () => {
  test.each(validators)("%s %#", (name, args, want) => {
    expect(validate(name, args)).toBe(want);
  });
});
