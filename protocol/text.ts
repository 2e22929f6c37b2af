/**
 * Text that becomes bytes. A JavaScript string may hold lone UTF-16 surrogates (JSON's "\ud800"
 * makes one), which have no UTF-8 encoding: every encoder substitutes something (TextEncoder
 * U+FFFD, Emscripten's stringToUTF8 swallows the next character), so two different strings can
 * encode to the same bytes, or one string to different bytes in two places. Anything that is
 * hashed or handed on as bytes is refused unless it is well-formed.
 */

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Whether `text` is well-formed Unicode (no lone surrogate), so it has exactly one UTF-8 encoding. */
export function isWellFormed(text: string): boolean {
  const native = (text as unknown as { isWellFormed?: () => boolean }).isWellFormed;
  return native ? native.call(text) : !LONE_SURROGATE.test(text);
}

/** `text` with each lone surrogate replaced by U+FFFD (what a tolerant decoder shows for bytes it cannot read). */
export function toWellFormed(text: string): string {
  const native = (text as unknown as { toWellFormed?: () => string }).toWellFormed;
  return native ? native.call(text) : text.replace(new RegExp(LONE_SURROGATE.source, "g"), "\uFFFD");
}

/** Where the first lone surrogate of `text` is, and which, for error messages (undefined when well-formed). */
export function loneSurrogate(text: string): { index: number; unit: string } | undefined {
  const m = LONE_SURROGATE.exec(text);
  return m ? { index: m.index, unit: `\\u${m[0].charCodeAt(0).toString(16).toUpperCase().padStart(4, "0")}` } : undefined;
}

const strictUtf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/** The text of UTF-8 `bytes` (a leading BOM kept), or undefined when they are not valid UTF-8. */
export function decodeUtf8(bytes: Uint8Array): string | undefined {
  try {
    return strictUtf8.decode(bytes);
  } catch {
    return undefined;
  }
}

/** The first `maxBytes` of `text`'s UTF-8 encoding, cut at a character boundary. */
export function truncateUtf8(text: string, maxBytes: number): string {
  if (text.length <= maxBytes / 3 || Buffer.byteLength(text, "utf8") <= maxBytes) return text;
  return Buffer.from(text.slice(0, maxBytes), "utf8").subarray(0, Math.max(0, maxBytes)).toString("utf8").replace(/\uFFFD$/, "");
}
