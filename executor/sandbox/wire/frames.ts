/**
 * How messages travel between the relayer and a sandbox process: each message is one frame, an
 * 8-byte header (two big-endian 32-bit lengths: the bytes that follow it, and of those the bytes of
 * the JSON text), then the message's fields as UTF-8 JSON, then its byte fields one after another.
 * A field whose value is bytes (a Uint8Array: the run's code, a fetch body, a long answer) is never
 * JSON text: the JSON names it with its length (`"$bytes": {"body": 1048576}`) and its bytes follow
 * as they are, so a byte crosses as one byte, not as the 6 or 7 characters of an escape inside an
 * escape. The reader refuses a frame longer than the bound its owner gives (before buffering it),
 * and anything that is not JSON, so a sandbox process can neither make the relayer buffer without
 * end nor hand it an object graph: a frame holding more than MAX_FRAME_VALUES JSON values (counted
 * on its text, before JSON.parse builds them in the reader's heap) is refused too, and what comes
 * out is plain JSON data and byte views, read field by field by messages.ts. `FrameWriter` writes
 * frames to a socket as fast as the other side reads them, and no faster.
 */

import type { Socket } from "node:net";
import { jsonTextValues } from "../../../protocol/json";
import { MAX_FRAME_VALUES } from "./bounds";

export const FRAME_HEADER_BYTES = 8;
/** The largest frame a 4-byte length can state (the bytes after the header). */
export const MAX_FRAME_BYTES = 0xffff_ffff;
/** The JSON key that lists a frame's byte fields, and how many a frame may hold. */
const BYTES_KEY = "$bytes";
const MAX_BYTE_FIELDS = 4;

/** One message as a frame: its Uint8Array fields as bytes after the JSON, every other field in the JSON. */
export function encodeFrame(message: Record<string, unknown>): Buffer {
  const parts = frameParts(message);
  return parts.length === 1 ? parts[0] : Buffer.concat(parts);
}

/**
 * One message as the pieces of its frame, in order: the header and the JSON in one buffer, then
 * each byte field as it is (not copied: a writer sends them one after another).
 */
export function frameParts(message: Record<string, unknown>): Buffer[] {
  let lengths: Record<string, number> | undefined;
  let bytes = 0;
  for (const name of Object.keys(message)) {
    if (name === BYTES_KEY) throw new TypeError(`a message may not have a field named ${BYTES_KEY}`);
    const value = message[name];
    if (value instanceof Uint8Array) {
      (lengths ??= {})[name] = value.byteLength;
      bytes += value.byteLength;
    }
  }
  const parts: Buffer[] = [];
  let json: string;
  if (lengths === undefined) json = JSON.stringify(message);
  else {
    // The byte fields leave the JSON, in the order the JSON lists them (the reader's order).
    const fields: Record<string, unknown> = {};
    for (const name of Object.keys(message)) {
      const v = message[name];
      if (name in lengths) parts.push(Buffer.isBuffer(v) ? v : Buffer.from((v as Uint8Array).buffer, (v as Uint8Array).byteOffset, (v as Uint8Array).byteLength));
      else fields[name] = v;
    }
    if (parts.length > MAX_BYTE_FIELDS) throw new RangeError(`a message has at most ${MAX_BYTE_FIELDS} byte fields`);
    fields[BYTES_KEY] = lengths;
    json = JSON.stringify(fields);
  }
  const jsonBytes = Buffer.byteLength(json, "utf8");
  const length = jsonBytes + bytes;
  if (length > MAX_FRAME_BYTES) throw new RangeError("message too large for one frame");
  const head = Buffer.allocUnsafe(FRAME_HEADER_BYTES + jsonBytes); // the JSON encoded into it (no copy)
  head.writeUInt32BE(length, 0);
  head.writeUInt32BE(jsonBytes, 4);
  head.write(json, FRAME_HEADER_BYTES, "utf8");
  return [head, ...parts];
}

/**
 * Cuts a byte stream into frames and parses each. `maxBytes()` is asked for each frame's bound
 * when its header arrives; past it, or on bad JSON, `onProblem` is called once and the reader
 * reads nothing more (the stream's owner ends the other side).
 */
export class FrameReader {
  private chunks: Buffer[] = [];
  private buffered = 0;
  private broken = false;

  constructor(
    private readonly maxBytes: () => number,
    private readonly onFrame: (message: unknown) => void,
    private readonly onProblem: (problem: string) => void,
  ) {}

  push(chunk: Buffer): void {
    if (this.broken) return;
    this.chunks.push(chunk);
    this.buffered += chunk.length;
    while (!this.broken && this.buffered >= FRAME_HEADER_BYTES) {
      const head = this.peek(FRAME_HEADER_BYTES);
      const length = head.readUInt32BE(0);
      const bound = this.maxBytes();
      if (length > bound) return this.fail(`a frame of ${length} bytes is larger than allowed (${bound})`);
      if (this.buffered < FRAME_HEADER_BYTES + length) return;
      const jsonBytes = head.readUInt32BE(4);
      const body = this.take(FRAME_HEADER_BYTES + length).subarray(FRAME_HEADER_BYTES);
      if (jsonBytes > length) return this.fail("a frame's JSON is longer than the frame");
      const text = body.toString("utf8", 0, jsonBytes);
      if (jsonTextValues(text, MAX_FRAME_VALUES) > MAX_FRAME_VALUES) return this.fail(`a frame holds more than ${MAX_FRAME_VALUES} JSON values`);
      let message: unknown;
      try {
        message = JSON.parse(text);
      } catch {
        return this.fail("a frame is not JSON");
      }
      const withBytes = attachBytes(message, body.subarray(jsonBytes));
      if (typeof withBytes === "string") return this.fail(withBytes);
      this.onFrame(withBytes);
    }
  }

  private fail(problem: string): void {
    this.broken = true;
    this.chunks = [];
    this.buffered = 0;
    this.onProblem(problem);
  }

  /** The first `n` buffered bytes, without consuming them. */
  private peek(n: number): Buffer {
    if (this.chunks[0].length < n) this.chunks = [Buffer.concat(this.chunks)];
    return this.chunks[0];
  }

  /** Consumes and returns the first `n` buffered bytes. */
  private take(n: number): Buffer {
    const all = this.chunks.length === 1 ? this.chunks[0] : Buffer.concat(this.chunks);
    this.chunks = all.length > n ? [all.subarray(n)] : [];
    this.buffered -= n;
    return all.subarray(0, n);
  }
}

/**
 * The message with its byte fields (listed under `$bytes` by encodeFrame) set to views of `bytes`,
 * or why the frame is malformed: the lengths must be those of the bytes exactly, the names new.
 */
function attachBytes(message: unknown, bytes: Buffer): unknown {
  const m = message !== null && typeof message === "object" && !Array.isArray(message) ? (message as Record<string, unknown>) : undefined;
  const lengths = m?.[BYTES_KEY];
  if (lengths === undefined) return bytes.length === 0 ? message : "a frame's bytes are not listed";
  if (lengths === null || typeof lengths !== "object" || Array.isArray(lengths)) return "a frame's bytes are not listed";
  const entries = Object.entries(lengths as Record<string, unknown>);
  if (entries.length > MAX_BYTE_FIELDS) return `a frame has more than ${MAX_BYTE_FIELDS} byte fields`;
  const out: Record<string, unknown> = { ...m };
  delete out[BYTES_KEY];
  let at = 0;
  for (const [name, n] of entries) {
    if (!Number.isSafeInteger(n) || (n as number) < 0 || at + (n as number) > bytes.length || name in out) return "a frame's bytes do not match their list";
    out[name] = bytes.subarray(at, at + (n as number));
    at += n as number;
  }
  return at === bytes.length ? out : "a frame's bytes do not match their list";
}

/**
 * Writes frames to a socket no faster than the other side reads them: while the socket's buffer is
 * full (write returned false) frames wait here, in order, until it drains. `unsentBytes` is what
 * this side holds that the other side has not taken (waiting here, or in the socket's buffer). A
 * frame marked with an older `runId` than a run frame sent after it is dropped if it still waits:
 * no one reads a finished run's answers. A frame's `written` callback is called once it has left
 * this side: all its bytes handed to the OS (the socket's write callback), or dropped, or never to
 * be sent (the socket failed).
 */
export class FrameWriter {
  private readonly waiting: { runId?: number; parts: Buffer[]; bytes: number; written?: () => void }[] = [];
  private waitingBytes = 0;
  private blocked = false;

  constructor(private readonly socket: Socket) {
    socket.on("drain", () => this.flush());
  }

  get unsentBytes(): number {
    return this.waitingBytes + this.socket.writableLength;
  }

  /**
   * Sends one message (`runId`: the run it belongs to; `startsRun`: a `run` message, which drops
   * what waits of earlier runs; `written`: called once the frame has left this side).
   */
  send(message: Record<string, unknown>, runId?: number, startsRun = false, written?: () => void): void {
    if (startsRun && runId !== undefined) this.drop(runId);
    let parts: Buffer[];
    try {
      parts = frameParts(message);
    } catch (err) {
      written?.();
      throw err;
    }
    if (this.blocked) {
      const bytes = parts.reduce((n, p) => n + p.length, 0);
      this.waiting.push({ runId, parts, bytes, written });
      this.waitingBytes += bytes;
    } else this.write(parts, written);
  }

  /** One frame's pieces, written together; a full buffer holds back what comes next until 'drain'. */
  private write(parts: Buffer[], written?: () => void): void {
    this.socket.cork();
    let ok = true;
    for (let i = 0; i < parts.length; i++) {
      // On the last piece: the socket calls it back once every byte before it is out (or with the error that ended the socket).
      ok = written && i === parts.length - 1 ? this.socket.write(parts[i], () => written()) : this.socket.write(parts[i]);
    }
    this.socket.uncork();
    if (!ok) this.blocked = true;
  }

  private drop(before: number): void {
    for (let i = this.waiting.length - 1; i >= 0; i--) {
      const w = this.waiting[i];
      if (w.runId !== undefined && w.runId < before) {
        this.waiting.splice(i, 1);
        this.waitingBytes -= w.bytes;
        w.written?.();
      }
    }
  }

  private flush(): void {
    this.blocked = false;
    while (!this.blocked && this.waiting.length > 0) {
      const { parts, bytes, written } = this.waiting.shift()!;
      this.waitingBytes -= bytes;
      this.write(parts, written);
    }
  }
}
