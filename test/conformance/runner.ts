/** The conformance vectors run through `floe test`'s case runner (the CLI's pipe-mode path). */
export { runCase as runVector, type GoldenCase as Vector } from "../../lib/cli/golden.ts";
