/**
 * JSON shapes every part of Vesta bounds before any recursive work touches them. V8's JSON.parse
 * is iterative, but JSON.stringify, structured clone (worker messages), zod and most libraries
 * recurse: a value nested a few thousand levels deep overflows the native stack wherever it is
 * walked next. So every parsed input is measured here, iteratively, right after parsing.
 */

/** Default nesting limit of every JSON input (request bodies, webhook bodies, js_params). */
export const DEFAULT_MAX_JSON_DEPTH = 64;

/**
 * Nesting past which a value that is already stored (an answer, or what an older version accepted)
 * is not shown nor stored as is: far above any input limit, far below what breaks a serializer.
 */
export const MAX_STORED_JSON_DEPTH = 256;

/**
 * Whether `value` nests arrays/objects more than `max` levels deep (a scalar is depth 0, `[]` and
 * `{}` are depth 1). Iterative: safe on any value JSON.parse can produce.
 */
export function jsonDeeperThan(value: unknown, max: number): boolean {
  const stack: Array<[unknown, number]> = [[value, 0]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!;
    if (v === null || typeof v !== "object") continue;
    if (depth + 1 > max) return true;
    const children = Array.isArray(v) ? v : Object.values(v as Record<string, unknown>);
    for (const child of children) if (child !== null && typeof child === "object") stack.push([child, depth + 1]);
  }
  return false;
}

/**
 * How many values JSON `text` holds, counted without parsing it and given up past `max` (then
 * `max + 1` is answered): 1 plus every comma and opening bracket outside strings, an upper bound
 * (an empty array or object counts twice). Strings are skipped with `indexOf`, so long text inside
 * strings costs little; what JSON.parse would build out of the rest (each value an object of the
 * parser's heap, tens of bytes for one character of `[],`) is known before it is built.
 */
export function jsonTextValues(text: string, max: number): number {
  let count = 1;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      let end = i;
      do {
        end = text.indexOf('"', end + 1);
        if (end < 0) return count; // unterminated: not JSON, JSON.parse refuses it
      } while (escaped(text, end));
      i = end;
    } else if (c === 0x2c || c === 0x5b || c === 0x7b) {
      if (++count > max) return count;
    }
  }
  return count;
}

/** Whether the quote at `at` is escaped (an odd number of backslashes before it). */
function escaped(text: string, at: number): boolean {
  let slashes = 0;
  while (text.charCodeAt(at - 1 - slashes) === 0x5c) slashes++;
  return slashes % 2 === 1;
}

/** The message every service answers a too-deep JSON input with. */
export const tooDeepMessage = (what: string, max: number) => `${what} nests arrays or objects more than ${max} levels deep (the limit is ${max})`;
