import { z } from "zod";
import { badRequest } from "./errors";

/** Parses `value` with `schema`, or throws a 400 naming each bad field. */
export function parseOrThrow<T extends z.ZodType>(schema: T, value: unknown, where: "body" | "query"): z.output<T> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const problems = result.error.issues.map((i) => {
    const path = i.path.length ? i.path.join(".") : where;
    if (i.code === "unrecognized_keys") return `${path === where ? where : path}: unknown field(s) ${i.keys.join(", ")}`;
    return `${path}: ${i.message}`;
  });
  throw badRequest(`invalid ${where}: ${problems.join("; ")}`, { problems });
}
