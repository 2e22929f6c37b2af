/**
 * How messages travel between the relayer and a sandbox process: each message is one frame, a
 * 4-byte big-endian length followed by that many bytes of UTF-8 JSON. The reader refuses a frame
 * longer than the bound its owner gives (before buffering it), and anything that is not JSON, so
 * a sandbox process can neither make the relayer buffer without end nor hand it an object graph:
 * a frame holding more than MAX_FRAME_VALUES JSON values (counted on its text, before JSON.parse
 * builds them in the reader's heap) is refused too, and what comes out is plain JSON data, read
 * field by field by messages.ts. The one byte field of
 * the protocol (the run's code) travels as base64 (`toFrame`/`fromFrame`).
 */

import { jsonTextValues } from "../../../protocol/json";
import { MAX_FRAME_VALUES } from "./bounds";

export const FRAME_HEADER_BYTES = 4;
/** The largest frame a 4-byte length can state. */
export const MAX_FRAME_BYTES = 0xffff_ffff;

/** One message as a frame. The message's `code`, when it is bytes, is sent as base64. */
export function encodeFrame(message: Record<string, unknown>): Buffer {
  const code = message.code;
  const json = JSON.stringify(code instanceof Uint8Array ? { ...message, code: Buffer.from(code.buffer, code.byteOffset, code.byteLength).toString("base64") } : message);
  const length = Buffer.byteLength(json, "utf8");
  if (length > MAX_FRAME_BYTES) throw new RangeError("message too large for one frame");
  const frame = Buffer.allocUnsafe(FRAME_HEADER_BYTES + length); // one buffer, the body encoded into it (no copy)
  frame.writeUInt32BE(length, 0);
  frame.write(json, FRAME_HEADER_BYTES, "utf8");
  return frame;
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
      const body = this.take(FRAME_HEADER_BYTES + length).subarray(FRAME_HEADER_BYTES);
      const text = body.toString("utf8");
      if (jsonTextValues(text, MAX_FRAME_VALUES) > MAX_FRAME_VALUES) return this.fail(`a frame holds more than ${MAX_FRAME_VALUES} JSON values`);
      let message: unknown;
      try {
        message = JSON.parse(text);
      } catch {
        return this.fail("a frame is not JSON");
      }
      this.onFrame(message);
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

/** The inverse of encodeFrame's base64 for `code`: strict base64 (as Buffer.toString writes it) back to bytes, or undefined. */
export function codeFromFrame(code: unknown): Uint8Array | undefined {
  if (typeof code !== "string" || code.length % 4 !== 0 || !/^[A-Za-z0-9+/]*={0,2}$/.test(code)) return undefined;
  return new Uint8Array(Buffer.from(code, "base64"));
}
