import type { CheckResult } from "./types";

const MARK = { pass: "PASS", fail: "FAIL", skip: "skip" } as const;

/** The results as a plain-text table (check, status, reason) with a closing summary line. */
export function formatResults(results: CheckResult[]): string {
  const width = Math.max(5, ...results.map((r) => r.check.length));
  const lines = [`${"CHECK".padEnd(width)}  STATUS  REASON`, `${"-".repeat(width)}  ------  ${"-".repeat(40)}`];
  for (const r of results) lines.push(`${r.check.padEnd(width)}  ${MARK[r.status].padEnd(6)}  ${r.reason}`);
  const count = (s: CheckResult["status"]) => results.filter((r) => r.status === s).length;
  const [passed, failed, skipped] = [count("pass"), count("fail"), count("skip")];
  lines.push("", `${passed} passed, ${failed} failed, ${skipped} skipped${skipped ? " (a skipped check proves nothing)" : ""}`);
  if (results.some((r) => r.reason.includes("DEVELOPMENT evidence"))) {
    lines.push("This is DEVELOPMENT evidence: it was not produced by a TEE and does not attest this deployment.");
  }
  return lines.join("\n");
}
