/**
 * The one string schema of both services' edges. Every string a request carries is well-formed
 * Unicode (a lone UTF-16 surrogate, which JSON's "\ud800" makes, has no UTF-8 encoding: ABI
 * encoding, hashing, key derivation and the stores would each fail or substitute differently), and
 * what is shown as a label holds no control characters. Refusals are 400 `invalid_text` (or the
 * code the field names, e.g. `invalid_code` for action code) with a message that says where.
 *
 * `parseOrThrow` (validate.ts) also walks every parsed input for strings no schema names (js_params,
 * typed_data, default_params, record keys), so nothing that is not well-formed gets past any edge.
 *
 * Factories only (no schema built at load): the relayer extends zod with OpenAPI before it builds them.
 */
import { z } from "zod";
import type { ErrorCode } from "./errorCodes";
import { isWellFormed, loneSurrogate, toWellFormed } from "./text";
import { utf8Length } from "./limits";

/**
 * What a string may hold besides well-formed Unicode:
 * - "label": one line shown as is (names, keys, ids): no control character (C0, DEL, C1), no line
 *   or paragraph separator, no bidirectional override or isolate (they reorder what is shown);
 * - "text": free text (descriptions, signed messages): tab, LF and CR allowed, nothing else of those;
 * - "code": anything well-formed (its UTF-8 bytes are hashed and run as they are).
 */
export type TextKind = "label" | "text" | "code";

export type TextRules = {
  kind: TextKind;
  /** Least characters (with `emptyMessage` when 1). */
  min?: number;
  emptyMessage?: string;
  /** Most bytes of UTF-8 (the contract's own limits count bytes). */
  maxBytes?: number;
  /** Most UTF-16 code units. */
  maxChars?: number;
  /** The error code a string that breaks these rules answers (default invalid_text). */
  errorCode?: ErrorCode;
};

const LINE_BREAKS = "\\t\\n\\r";
const CONTROLS = "\\u0000-\\u001F\\u007F-\\u009F\\u2028\\u2029\\u202A-\\u202E\\u2066-\\u2069";
const FORBIDDEN: Record<TextKind, RegExp | undefined> = {
  label: new RegExp(`[${CONTROLS}]`),
  text: new RegExp(`(?![${LINE_BREAKS}])[${CONTROLS}]`),
  code: undefined,
};

const hex = (c: string) => `U+${c.charCodeAt(0).toString(16).toUpperCase().padStart(4, "0")}`;

/** Why `s` is not well-formed Unicode (undefined when it is). */
export function malformedProblem(s: string): string | undefined {
  const lone = isWellFormed(s) ? undefined : loneSurrogate(s);
  return lone && `must be well-formed Unicode: a lone surrogate ${lone.unit} at character ${lone.index} has no UTF-8 encoding`;
}

/** Why `s` is not acceptable text of `kind` (undefined when it is). */
export function textProblem(s: string, kind: TextKind): string | undefined {
  const malformed = malformedProblem(s);
  if (malformed) return malformed;
  const bad = FORBIDDEN[kind]?.exec(s);
  if (bad) return `must not hold control characters (${hex(bad[0])} at character ${bad.index})${kind === "label" ? ": it is one line of plain text" : ""}`;
  return undefined;
}

/** A string schema with `rules`: well-formed, of its kind, within its bounds. */
export function text(rules: TextRules) {
  const errorCode = rules.errorCode ?? "invalid_text";
  let s = z.string();
  if (rules.min) s = s.min(rules.min, rules.emptyMessage);
  // No more code units than bytes of UTF-8: a cheap bound before the byte count.
  const maxChars = Math.min(rules.maxChars ?? Infinity, rules.maxBytes ?? Infinity);
  if (maxChars !== Infinity) s = s.max(maxChars, rules.maxBytes !== undefined && maxChars === rules.maxBytes ? `at most ${rules.maxBytes} bytes of UTF-8` : `at most ${maxChars} characters`);
  return s.superRefine((v, ctx) => {
    const problem = textProblem(v, rules.kind);
    if (problem) ctx.addIssue({ code: "custom", message: problem, params: { errorCode }, fatal: true }); // the code the API answers it with (read by parseOrThrow); fatal: no later check reads a malformed string
    else if (rules.maxBytes !== undefined && v.length <= maxChars && utf8Length(v) > rules.maxBytes) ctx.addIssue({ code: "custom", message: `at most ${rules.maxBytes} bytes of UTF-8` });
  });
}

/**
 * Where the first string of `value` (a parsed JSON input: its strings and its object keys) that is
 * not well-formed is ("a.b.2" as zod names paths, "" for `value` itself), with the problem; undefined when all are.
 * Iterative, for any depth.
 */
export function firstMalformedString(value: unknown): { path: string; problem: string } | undefined {
  const stack: Array<[unknown, string]> = [[value, ""]];
  while (stack.length > 0) {
    const [v, path] = stack.pop()!;
    if (typeof v === "string") {
      const problem = malformedProblem(v);
      if (problem) return { path, problem };
    } else if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push([v[i], path ? `${path}.${i}` : String(i)]);
    } else if (v !== null && typeof v === "object") {
      for (const [k, child] of Object.entries(v)) {
        const problem = malformedProblem(k);
        const at = path ? `${path}.${k}` : k;
        if (problem) return { path: `${at} (the key)`, problem };
        stack.push([child, at]);
      }
    }
  }
  return undefined;
}

/**
 * Parsed JSON with every lone surrogate of its strings and keys replaced by U+FFFD: for input taken
 * as it comes from a third party (a webhook's body), which is kept rather than refused. Recursive:
 * only for values whose depth was bounded first (jsonDeeperThan).
 */
export function wellFormedJson(value: unknown): unknown {
  if (typeof value === "string") return toWellFormed(value);
  if (Array.isArray(value)) return value.map(wellFormedJson);
  if (value === null || typeof value !== "object") return value;
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [toWellFormed(k), wellFormedJson(v)]));
}
