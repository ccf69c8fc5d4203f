/** Reporters of `floe test`: the default text lines, TAP version 13, JUnit XML (for CI systems). */

export interface CaseResult {
  readonly file: string;
  readonly label: string;
  /** pass; fail (with `diff`); known: a declared divergence that fails as expected. */
  readonly outcome: "pass" | "fail" | "known";
  readonly diff?: string;
  readonly divergence?: string;
  readonly ms: number;
}

export type Reporter = "text" | "tap" | "junit";

/** The summary line of every reporter's text form. */
export function summary(results: CaseResult[]): string {
  const n = (o: CaseResult["outcome"]) => results.filter((r) => r.outcome === o).length;
  const known = n("known");
  return `${n("pass")} passed, ${n("fail")} failed${known ? `, ${known} known divergence(s)` : ""}`;
}

/** One result as the text reporter prints it (failures always; passes unless quiet). */
export function textLine(r: CaseResult, quiet: boolean): string {
  if (r.outcome === "pass") return quiet ? "" : `ok   ${r.label}\n`;
  if (r.outcome === "known") return quiet ? "" : `ok   ${r.label} (known divergence: ${r.divergence})\n`;
  return `FAIL ${r.label}\n  ${(r.diff ?? "").replace(/\n/g, "\n  ")}\n`;
}

export function tap(results: CaseResult[]): string {
  let out = `TAP version 13\n1..${results.length}\n`;
  results.forEach((r, i) => {
    const desc = r.label.replace(/#/g, "\\#").replace(/\n/g, " ");
    if (r.outcome === "fail") {
      out += `not ok ${i + 1} - ${desc}\n  ---\n  message: ${JSON.stringify(r.diff ?? "")}\n  file: ${JSON.stringify(r.file)}\n  ...\n`;
    } else if (r.outcome === "known") out += `not ok ${i + 1} - ${desc} # TODO known divergence: ${(r.divergence ?? "").replace(/\n/g, " ")}\n`;
    else out += `ok ${i + 1} - ${desc}\n`;
  });
  return out + `# ${summary(results)}\n`;
}

const xml = (s: string) =>
  s.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&apos;" })[c]!).replace(/[\x00-\x08\x0b\x0c\x0e-\x1f]/g, "");

/** JUnit XML: one <testsuite> per case file; a known divergence is a skipped test with its reason. */
export function junit(results: CaseResult[]): string {
  const files = [...new Set(results.map((r) => r.file))];
  const sec = (ms: number) => (ms / 1000).toFixed(3);
  let out = `<?xml version="1.0" encoding="UTF-8"?>\n<testsuites name="floe test" tests="${results.length}" failures="${results.filter((r) => r.outcome === "fail").length}" time="${sec(results.reduce((a, r) => a + r.ms, 0))}">\n`;
  for (const f of files) {
    const rs = results.filter((r) => r.file === f);
    out += `  <testsuite name="${xml(f)}" tests="${rs.length}" failures="${rs.filter((r) => r.outcome === "fail").length}" skipped="${rs.filter((r) => r.outcome === "known").length}" time="${sec(rs.reduce((a, r) => a + r.ms, 0))}">\n`;
    for (const r of rs) {
      out += `    <testcase classname="${xml(f)}" name="${xml(r.label)}" time="${sec(r.ms)}"`;
      if (r.outcome === "pass") out += "/>\n";
      else if (r.outcome === "known") out += `>\n      <skipped message="${xml(`known divergence: ${r.divergence ?? ""}`)}"/>\n    </testcase>\n`;
      else out += `>\n      <failure message="${xml((r.diff ?? "").split("\n")[0]!)}">${xml(r.diff ?? "")}</failure>\n    </testcase>\n`;
    }
    out += "  </testsuite>\n";
  }
  return out + "</testsuites>\n";
}
