/** Go's `MatchString`, `FindString` and `FindStringSubmatch` on a compiled Go regexp. */
import type { GoRegex } from "./compile.ts";

/** Go `MatchString`: a match anywhere. */
export function goMatchString(re: GoRegex, s: string): boolean {
  return re.test(s);
}

/** Go `FindString`: the leftmost match, "" when none. */
export function goFindString(re: GoRegex, s: string): string {
  const m = re.cursor(s);
  return m.find(0) ? m.group(0)! : "";
}

/** Go `FindStringSubmatch`: the match and its groups ("" for a group that did not take part), null when none. */
export function goFindStringSubmatch(re: GoRegex, s: string): string[] | null {
  const m = re.cursor(s);
  if (!m.find(0)) return null;
  const out: string[] = [];
  for (let i = 0; i < re.names.length; i++) out.push(m.group(i) ?? "");
  return out;
}
