/**
 * A host call's bulk, and an answer's: what crosses the wire as bytes beside the JSON, encoded once.
 * A fetch body (text or bytes), an Encrypt message and a Decrypt ciphertext leave the sandbox
 * process as their bytes (`splitCall`), not as JSON text inside a JSON frame (a control character
 * was 6 characters in the arguments, then 7 in the frame); a fetch answer's body and a long string
 * answer come back as their bytes (host/call-channel.ts makes them, `joinAnswer` puts them back).
 * The action's API does not change: the guest modules write and read the same JSON as before, the
 * sandbox process takes the bulk out of it and puts it back. Both sides check the same bounds
 * (bounds.ts callArgsChars, callBodyBytes), with the checks of call-checks.ts that the argument
 * helpers below share, so an argument is refused with the same message whichever side refuses it.
 */
import { decodeUtf8, isWellFormed } from "../../../protocol/text";
import { callArgsChars, callBodyBytes, MAX_CRYPTO_MESSAGE_CHARS } from "./bounds";
import type { RunLimits } from "../types";

/** A string argument of at most `max` characters. */
export function stringArg(args: Record<string, unknown>, name: string, max: number): string {
  const v = args[name];
  if (typeof v !== "string") throw new TypeError(`${name} must be a string`);
  if (v.length > max) throw new RangeError(`${name} is longer than ${max} characters`);
  return v;
}

/**
 * A string argument of at most `maxBytes` of UTF-8 (what is sent or processed is bytes: "€" is 3).
 * The characters are compared first: a string never has more characters than UTF-8 bytes.
 */
export function utf8Arg(args: Record<string, unknown>, name: string, maxBytes: number): string {
  const v = args[name];
  if (typeof v !== "string") throw new TypeError(`${name} must be a string`);
  if (v.length > maxBytes || Buffer.byteLength(v, "utf8") > maxBytes) throw new RangeError(`${name} is larger than ${maxBytes} bytes of UTF-8`);
  return v;
}

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** A fetch's body as its arguments give it (text, or base64), checked; undefined when there is none. Throws what the action sees. */
export function fetchBodyArg(args: Record<string, unknown>, limits: RunLimits): { body: string } | { bodyBase64: string } | undefined {
  // Bounded by what is sent: its UTF-8 bytes (a "€" is 3), or the bytes its base64 decodes to.
  const body = args.body === undefined ? undefined : utf8Arg(args, "body", limits.maxFetchBytes);
  const bodyBase64 = args.bodyBase64 === undefined ? undefined : stringArg(args, "bodyBase64", 4 * Math.ceil(limits.maxFetchBytes / 3));
  if (body !== undefined && bodyBase64 !== undefined) throw new TypeError("fetch: a body is text or base64, not both");
  if (bodyBase64 !== undefined && !BASE64.test(bodyBase64)) throw new TypeError("fetch: bodyBase64 is not base64");
  if (bodyBase64 !== undefined && Buffer.byteLength(bodyBase64, "base64") > limits.maxFetchBytes) throw new RangeError(`bodyBase64 is larger than ${limits.maxFetchBytes} bytes`);
  return body !== undefined ? { body } : bodyBase64 !== undefined ? { bodyBase64 } : undefined;
}

/** The argument of `op` that travels as bytes (a fetch's is `body` or `bodyBase64`), if any. */
export const BULK_ARGS: Readonly<Record<string, readonly string[]>> = { fetch: ["body", "bodyBase64"], encrypt: ["message"], decrypt: ["ciphertext"] };

const record = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === "object" && !Array.isArray(v);

/** A host call as it leaves the sandbox process: its arguments without their bulk, and the bulk as bytes. */
export type WireCall = { argsJson: string; body?: Buffer };

/**
 * The sandbox process's side of a call (the action's JSON arguments, already bounded by
 * hostMessageChars): its bulk taken out as bytes, checked as call-checks.ts checks it; or why it is
 * refused (`refused`: a bulk past its bound, the message the relayer gave; `tooLarge`: arguments
 * past callArgsChars). Arguments it cannot read go as they are: the relayer refuses them.
 */
export function splitCall(op: string, argsJson: string, limits: RunLimits): WireCall | { refused: string } | { tooLarge: true } {
  const names = BULK_ARGS[op];
  let args: unknown;
  if (names) {
    try {
      args = JSON.parse(argsJson);
    } catch {
      args = undefined;
    }
  }
  if (!names || !record(args) || names.every((name) => args[name] === undefined)) {
    return argsJson.length > callArgsChars(op) ? { tooLarge: true } : { argsJson };
  }
  let body: Buffer;
  try {
    if (op === "fetch") {
      const given = fetchBodyArg(args, limits)!;
      body = "body" in given ? Buffer.from(given.body, "utf8") : Buffer.from(given.bodyBase64, "base64");
    } else {
      // Encrypt's message in UTF-8 bytes, as it is encrypted; Decrypt's ciphertext is base64 text (one byte a character).
      const text = op === "encrypt" ? utf8Arg(args, "message", MAX_CRYPTO_MESSAGE_CHARS) : stringArg(args, "ciphertext", 2 * MAX_CRYPTO_MESSAGE_CHARS);
      body = Buffer.from(text, "utf8");
      if (body.length > callBodyBytes(op, limits)) throw new RangeError(`ciphertext is larger than ${callBodyBytes(op, limits)} bytes of UTF-8`);
    }
  } catch (err) {
    return { refused: (err as Error).message };
  }
  const rest = Object.fromEntries(Object.entries(args).filter(([name]) => !names.includes(name)));
  const json = JSON.stringify(rest);
  return json.length > callArgsChars(op) ? { tooLarge: true } : { argsJson: json, body };
}

/**
 * The relayer's side: the arguments with the bulk put back as the string the Host reads (a fetch
 * body as text when its bytes are UTF-8, else as base64: the same bytes are sent either way).
 * Throws (what the action sees) when the bulk is past its bound or the arguments carry it too.
 */
export function joinCall(op: string, args: Record<string, unknown>, body: Uint8Array, limits: RunLimits): Record<string, unknown> {
  const names = BULK_ARGS[op];
  if (!names) throw new TypeError(`${op.slice(0, 64)} carries no bytes`);
  if (names.some((name) => args[name] !== undefined)) throw new TypeError(`${op}: the ${names.join(" or ")} travels as bytes, not in the arguments`);
  const max = callBodyBytes(op, limits);
  if (body.length > max) throw new RangeError(`${op === "fetch" ? "body" : names[0]} is larger than ${max} bytes`);
  const bytes = Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  if (op === "fetch") {
    const text = decodeUtf8(bytes);
    return { ...args, ...(text === undefined ? { bodyBase64: bytes.toString("base64") } : { body: text }) };
  }
  return { ...args, [names[0]]: bytes.toString("utf8") };
}

/**
 * How an answer's bytes join its JSON for the action: `text` and `base64` are a fetch answer's body
 * (its `body` as text, its `bodyBase64`), `string` the answer itself, a string.
 */
export type BodyAs = "text" | "base64" | "string";

/** Strings answered as bytes from this length on (shorter ones cost nothing to escape). */
export const STRING_ANSWER_BYTES_FROM = 1024;

/**
 * The relayer's side of an answer: its JSON, with the bulk apart as bytes (a fetch answer's body;
 * a long string, as a decrypted message), or undefined for an answer that crosses as JSON only.
 * `bytes`: a fetch answer's body as read, when the caller has them (the text is then not made).
 */
export function splitAnswer(op: string, value: unknown, bytes?: Buffer): { json: string; body: Buffer; bodyAs: BodyAs } | undefined {
  if (typeof value === "string") {
    // Only well-formed text has one UTF-8 encoding; the rest crosses as JSON, whose escapes keep it whole.
    return value.length >= STRING_ANSWER_BYTES_FROM && isWellFormed(value) ? { json: "", body: Buffer.from(value, "utf8"), bodyAs: "string" } : undefined;
  }
  if (op !== "fetch" || !record(value)) return undefined;
  if (bytes) {
    // The body's bytes as the fetch read them (host/fetch.ts fetchedBytes): its text or base64 is never made (nor read here).
    const rest = Object.fromEntries(Object.keys(value).filter((k) => k !== "body" && k !== "bodyBase64").map((k) => [k, value[k]]));
    return { json: JSON.stringify(rest), body: bytes, bodyAs: "bodyBase64" in value ? "base64" : "text" };
  }
  const { body, bodyBase64, ...rest } = value;
  // base64 wins, as guest/http.js reads a fetch answer.
  if (typeof bodyBase64 === "string") return { json: JSON.stringify(rest), body: Buffer.from(bodyBase64, "base64"), bodyAs: "base64" };
  if (typeof body === "string" && isWellFormed(body)) return { json: JSON.stringify(rest), body: Buffer.from(body, "utf8"), bodyAs: "text" };
  return undefined;
}

/** The sandbox process's side: the answer's JSON as the action reads it, its bytes put back; undefined when they do not fit together. */
export function joinAnswer(json: string, body: Uint8Array, bodyAs: BodyAs): string | undefined {
  const bytes = Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  if (bodyAs === "string") return JSON.stringify(bytes.toString("utf8"));
  let answer: unknown;
  try {
    answer = JSON.parse(json);
  } catch {
    return undefined;
  }
  if (!record(answer)) return undefined;
  // The text of a body whose bytes are UTF-8, as hostFetch answers it (decodeUtf8: a leading BOM kept); the bytes otherwise.
  const text = bodyAs === "text" ? decodeUtf8(bytes) : undefined;
  return JSON.stringify({ ...answer, ...(text !== undefined ? { body: text } : { bodyBase64: bytes.toString("base64") }) });
}
