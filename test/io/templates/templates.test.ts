import { expect, test } from "bun:test";
import { compileTemplate } from "../../../lib/io/templates/index.ts";
import type { Value } from "../../../lib/value/values.ts";
import cases from "../../../fixtures/templates/sink-templates.json";

interface Case {
  name: string;
  tmpl: string;
  data: unknown;
  want?: string;
  err?: string;
}

test.each((cases as Case[]).map((c) => [c.name, c] as const))("%s", (_name, c) => {
  let out: string | undefined;
  let err: string | undefined;
  try {
    out = compileTemplate(c.tmpl)(c.data as Value);
  } catch (e) {
    err = (e as Error).message;
  }
  if (c.err !== undefined) expect(err).toBe(c.err);
  else {
    expect(err).toBeUndefined();
    expect(out).toBe(c.want!);
  }
});
