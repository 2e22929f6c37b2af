/**
 * The chain journal's file: a magic line, then records framed as
 *   [u32 BE payload length][u32 BE CRC-32 of the payload][payload: UTF-8 JSON]
 * appended and fdatasync'ed before what they record is acknowledged. A `kill -9` (or a power cut)
 * can leave one torn record at the end: it is detected (short header, length past the end of the
 * file, bad checksum or zero-filled tail) and cut off at open; a bad record followed by more data
 * is corruption, not a torn write, and stops the boot with the offset.
 */
import fs from "node:fs";
import path from "node:path";
import { crc32 } from "node:zlib";

const MAGIC = Buffer.from("VESTA-CHAIN-JOURNAL 1\n");
const HEADER = 8;
/** The largest record accepted: a block of the local chain (30M gas of calldata is < 8 MB of hex). */
export const MAX_RECORD_BYTES = 64 * 1024 * 1024;

export class JournalError extends Error {}

export function frame(payload: unknown): Buffer {
  const body = Buffer.from(JSON.stringify(payload));
  if (body.length > MAX_RECORD_BYTES) throw new JournalError(`a journal record of ${body.length} bytes is larger than ${MAX_RECORD_BYTES}`);
  const head = Buffer.alloc(HEADER);
  head.writeUInt32BE(body.length, 0);
  head.writeUInt32BE(crc32(body), 4);
  return Buffer.concat([head, body]);
}

export type ReadResult = { records: unknown[]; goodBytes: number; tornBytes: number };

function allZero(buf: Buffer): boolean {
  for (const b of buf) if (b !== 0) return false;
  return true;
}

/** Reads every whole record of `file` (which must exist); a torn tail is reported, not returned. */
export function readJournal(file: string): ReadResult {
  const buf = fs.readFileSync(file);
  const magic = buf.subarray(0, MAGIC.length);
  if (!MAGIC.subarray(0, magic.length).equals(magic)) {
    throw new JournalError(`${file} is not a Vesta chain journal (it does not start with "${MAGIC.toString().trim()}")`);
  }
  // Cut short in its first write (the magic line): an empty journal, written again at open.
  if (buf.length < MAGIC.length) return { records: [], goodBytes: 0, tornBytes: buf.length };
  const records: unknown[] = [];
  let at = MAGIC.length;
  while (at < buf.length) {
    const rest = buf.length - at;
    const len = rest >= HEADER ? buf.readUInt32BE(at) : 0;
    const end = at + HEADER + len;
    const whole = rest >= HEADER && len > 0 && len <= MAX_RECORD_BYTES && end <= buf.length;
    const body = whole ? buf.subarray(at + HEADER, end) : undefined;
    if (body && crc32(body) === buf.readUInt32BE(at + 4)) {
      records.push(JSON.parse(body.toString("utf8")));
      at = end;
      continue;
    }
    // A torn write is the last thing in the file: cut short, or followed by nothing but zeros.
    if (rest < HEADER || end >= buf.length || allZero(buf.subarray(whole ? end : at))) break;
    throw new JournalError(
      `${file} is corrupt at byte ${at} (record ${records.length + 1}: bad length or checksum, with data after it): not a torn last write. ` +
        "It cannot be repaired here: keep a copy and move the data directory away to start a new chain",
    );
  }
  return { records, goodBytes: at, tornBytes: buf.length - at };
}

/** An open journal: appends go through one FileHandle, each batch made durable before it resolves. */
export class JournalFile {
  private constructor(private readonly fh: fs.promises.FileHandle) {}

  /** Opens `file` for appending, first cutting it to `goodBytes` (dropping a torn tail), or (re)creates it empty. */
  static async open(file: string, goodBytes?: number): Promise<JournalFile> {
    if (goodBytes === undefined || goodBytes < MAGIC.length) {
      fs.mkdirSync(path.dirname(file), { recursive: true });
      fs.rmSync(file, { force: true });
      const fd = fs.openSync(file, "wx", 0o600);
      fs.writeSync(fd, MAGIC);
      fs.fdatasyncSync(fd);
      fs.closeSync(fd);
      syncDir(path.dirname(file)); // the new file's name survives a crash too
    } else if (fs.statSync(file).size !== goodBytes) {
      fs.truncateSync(file, goodBytes);
    }
    return new JournalFile(await fs.promises.open(file, "a"));
  }

  /** Appends the framed records and waits for the disk (fdatasync). */
  async append(frames: Buffer[]): Promise<void> {
    await this.fh.write(Buffer.concat(frames));
    await this.fh.datasync();
  }

  async close(): Promise<void> {
    await this.fh.close();
  }
}

export function syncDir(dir: string): void {
  const fd = fs.openSync(dir, "r");
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}
