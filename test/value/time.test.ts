import { describe, expect, test } from "bun:test";
import parseCases from "../../fixtures/value/time-parse.json";
import formatCases from "../../fixtures/value/time-format.json";
import misc from "../../fixtures/value/time-misc.json";
import {
  DateTime, Duration, formatGoLayout, formatGoTimeString, formatPattern, formatRfc3339Nano,
  loadLocation, parseGoDuration, parseTime, toTime, toTimeForCompare, UTC, zoneByName, civil,
} from "../../lib/value/time.ts";
import { fmtV } from "../../lib/value/values.ts";
import { RowError } from "../../lib/errors.ts";

const NOW = 1541152480000; // 2018-11-02T09:54:40Z, the conformance epoch

function zone(name: string) {
  const z = zoneByName(name);
  if (!z) throw new Error(`zone ${name} missing: install the tzdata package`);
  return z;
}

function outcome(f: () => string): string {
  try {
    return f();
  } catch (e) {
    if (e instanceof RowError) return `ERR ${e.message}`;
    throw e;
  }
}

describe("parseTime (functions §7.2)", () => {
  test.each(parseCases.map((c) => [c.name, c] as const))("%s", (_name, c) => {
    const got = outcome(() => formatGoTimeString(parseTime(c.input, zone(c.zone), c.format, c.now ?? NOW)));
    expect(got).toBe(c.want ?? `ERR ${c.err}`);
  });
});

describe("formatting with eKuiper patterns and Go layouts (functions §7.1)", () => {
  test.each(formatCases.map((c) => [c.name, c] as const))("%s", (_name, c) => {
    const dt = new DateTime(c.ms, c.ns ?? 0, zone(c.zone));
    const got = outcome(() => (c.pattern !== undefined ? formatPattern(dt, c.pattern) : formatGoLayout(dt, c.layout!)));
    expect(got).toBe(c.want ?? `ERR ${c.err}`);
  });
});

describe("parseGoDuration", () => {
  test.each(misc.durations.map((c) => [c.in, c] as const))("%p", (_in, c) => {
    const got = outcome(() => parseGoDuration(c.in).toString());
    expect(got).toBe(c.want ?? `ERR ${c.err}`);
  });
});

describe("zones", () => {
  test.each(misc.zones.map((c) => [`${c.zone} @ ${c.ms}`, c] as const))("%s", (_n, c) => {
    const got = outcome(() => {
      const z = loadLocation(c.zone);
      return `${z.offsetAt(c.ms!)} ${z.abbrevAt(c.ms!)}`;
    });
    expect(got).toBe(c.err ? `ERR ${c.err}` : `${c.offset} ${c.abbrev}`);
  });

  test("zones are cached by name", () => {
    expect(zoneByName("Asia/Shanghai")).toBe(zoneByName("Asia/Shanghai")!);
  });

  test("offset lookups agree with Intl across centuries, both sides of transitions", () => {
    for (const name of ["America/New_York", "Europe/Berlin", "Australia/Sydney", "America/Santiago"]) {
      const z = zone(name);
      const f = new Intl.DateTimeFormat("en-US", { timeZone: name, timeZoneName: "longOffset" });
      for (let ms = -1e12; ms < 6e12; ms += 7_777_777_777) {
        const part = f.formatToParts(ms).find((p) => p.type === "timeZoneName")!.value;
        const m = /GMT([+-])(\d\d):(\d\d)/.exec(part);
        const off = m ? (m[1] === "-" ? -1 : 1) * (Number(m[2]) * 3600 + Number(m[3]) * 60) : 0;
        expect(`${name} ${ms} ${z.offsetAt(ms)}`).toBe(`${name} ${ms} ${off}`);
      }
    }
  });
});

describe("toTime (functions §0.6)", () => {
  const sh = () => zone("Asia/Shanghai");
  test("ints are epoch milliseconds in the zone", () => {
    expect(formatGoTimeString(toTime(1541152480123n, sh()))).toBe("2018-11-02 17:54:40.123 +0800 CST");
  });
  test("floats are truncated milliseconds", () => {
    expect(toTime(1541152480123.9, UTC).ms).toBe(1541152480123);
    expect(toTime(-1.5, UTC).ms).toBe(-1);
  });
  test("datetimes are unchanged", () => {
    const dt = new DateTime(5, 6, sh());
    expect(toTime(dt, UTC)).toBe(dt);
  });
  test("strings are parsed in the zone", () => {
    expect(formatRfc3339Nano(toTime("2019-01-01 00:00:00", sh()))).toBe("2019-01-01T00:00:00+08:00");
  });
  test.each([
    ["null", null, "unsupported type to convert to timestamp <nil>"],
    ["a bool", true, "unsupported type to convert to timestamp true"],
    ["an array", [1n], "unsupported type to convert to timestamp [1]"],
    ["a duration", new Duration(5n), "unsupported type to convert to timestamp 5ns"],
  ] as const)("%s is an error", (_n, v, msg) => {
    expect(outcome(() => fmtV(toTime(v as never, UTC)))).toBe(`ERR ${msg}`);
  });
  test("the comparison helper returns undefined instead of failing", () => {
    expect(toTimeForCompare("nope", UTC)).toBeUndefined();
    expect(toTimeForCompare(null, UTC)).toBeUndefined();
    expect(toTimeForCompare(true, UTC)).toBeUndefined();
    expect(toTimeForCompare(1000n, UTC)?.ms).toBe(1000);
    expect(toTimeForCompare("1970-01-01T00:00:01Z", UTC)?.ms).toBe(1000);
  });
});

describe("rendering", () => {
  test("Time.String trims the fraction and names the zone", () => {
    expect(fmtV(new DateTime(1541152488442, 0, UTC))).toBe("2018-11-02 09:54:48.442 +0000 UTC");
    expect(fmtV(new DateTime(1541152488000, 1, UTC))).toBe("2018-11-02 09:54:48.000000001 +0000 UTC");
  });
  test("RFC 3339 uses Z for UTC and a colon offset elsewhere", () => {
    expect(formatRfc3339Nano(new DateTime(0, 0, UTC))).toBe("1970-01-01T00:00:00Z");
    expect(formatRfc3339Nano(new DateTime(0, 0, zone("Asia/Kolkata")))).toBe("1970-01-01T05:30:00+05:30");
  });
  test("years before 1 and dates before the epoch", () => {
    expect(fmtV(new DateTime(-62135683200000, 0, UTC))).toBe("0000-12-31 00:00:00 +0000 UTC");
    expect(fmtV(new DateTime(-1, 0, UTC))).toBe("1969-12-31 23:59:59.999 +0000 UTC");
  });
  test("civil fields", () => {
    expect(civil(new DateTime(1579140864913, 7, UTC))).toEqual({
      year: 2020, month: 1, day: 16, hour: 2, minute: 14, second: 24, nanos: 913000007, weekday: 4, offset: 0,
    });
  });
});
