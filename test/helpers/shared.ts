/**
 * Where the shared contract lives (spec/ and conformance/): `FLOE_SHARED_DIR`, else `../shared`
 * next to this repository, else `/work/shared`. A missing directory fails the suite with a message
 * that says what to set — the vectors are part of the contract and never skipped.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";

const ROOT = join(import.meta.dir, "../..");

export function sharedDir(): string {
  const candidates = [process.env.FLOE_SHARED_DIR, join(ROOT, "../shared"), "/work/shared"].filter((x): x is string => !!x);
  const found = candidates.find((d) => existsSync(join(d, "conformance")) && existsSync(join(d, "spec")));
  if (!found)
    throw new Error(`the shared spec/ and conformance/ directories were not found (tried ${candidates.join(", ")}); set FLOE_SHARED_DIR`);
  return found;
}
