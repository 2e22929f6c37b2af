import { z } from "zod";
import { appError, badRequest } from "./errors";
import { isErrorCode, type ErrorCode } from "./errorCodes";
import { firstMalformedString } from "./textSchema";

/** The error code a zod issue asks for (textSchema.ts marks its issues), if any. */
const codeOf = (issue: z.core.$ZodIssue): ErrorCode | undefined => {
  const code = issue.code === "custom" ? (issue.params as { errorCode?: unknown } | undefined)?.errorCode : undefined;
  return typeof code === "string" && isErrorCode(code) ? code : undefined;
};

/**
 * Parses `value` with `schema`, or throws a 400 naming each bad field: `invalid_request`, or the one
 * code every problem asks for (e.g. `invalid_text`, `invalid_code`). The input is also walked for
 * strings no field's schema checks (free-form JSON, record keys): one that is not well-formed
 * Unicode is a problem too (400 invalid_text), so none reaches a handler.
 */
export function parseOrThrow<T extends z.ZodType>(schema: T, value: unknown, where: "body" | "query"): z.output<T> {
  const result = schema.safeParse(value);
  const issues = result.success ? [] : result.error.issues;
  const problems = issues.map((i) => {
    const path = i.path.length ? i.path.join(".") : where;
    if (i.code === "unrecognized_keys") return `${path === where ? where : path}: unknown field(s) ${i.keys.join(", ")}`;
    return `${path}: ${i.message}`;
  });
  const codes = new Set(issues.map(codeOf));
  const malformed = firstMalformedString(value);
  if (malformed && !issues.some((i) => i.path.join(".") === malformed.path && codeOf(i))) {
    problems.push(`${malformed.path || where}: ${malformed.problem}`);
    codes.add("invalid_text");
  }
  if (result.success && problems.length === 0) return result.data;
  const [only] = codes;
  const message = `invalid ${where}: ${problems.join("; ")}`;
  throw only !== undefined && codes.size === 1 ? appError(only, message, { problems }) : badRequest(message, { problems });
}
