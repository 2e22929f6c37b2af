/**
 * What decoding ABI data costs ethers v6 (6.17), counted on the data before ethers decodes it
 * (ethers-bounds.ts weighs the counts against the call's budget). The data itself says how much a
 * decode makes: a dynamic value is an offset, and nothing stops two offsets from naming the same
 * bytes, so 64 KB whose 1,000 offsets all point at one array of 1,000 words decode as a million
 * values; ethers' only guard lets the values read reach 1024 times the data. And ethers copies:
 * each word it reads copies the whole data (the error details of a check are built before the
 * check), each dynamic value copies the data from its offset to the end, so decoding all of 256 KB
 * copies 2 GB. Neither shows in the size of the arguments.
 *
 * So this walks the data the way ethers' Reader and coders do (abi/coders/*.ts: unpack, ArrayCoder,
 * BytesCoder, ...): the same offsets, lengths, bounds checks and 1024x read limit, the same errors
 * that end the whole decode (a BUFFER_OVERRUN) and those that end one value only (an offset or a
 * length past 2^53, kept as that value's error), and counts what ethers would make and copy:
 * values (each slot of a tuple or an array, each Result), payload bytes (of `bytes`, `string`,
 * `bytesN`), addresses (each checksummed with a keccak256) and copied bytes. It stops as soon as the
 * counts pass the budget, so it costs at most what the budget allows, and for normal data a few
 * operations a word (nothing is copied).
 */
import type { ParamType } from "ethers";

const WORD = 32;
/** ethers' default limit on the bytes a decode reads: 1024 times the data (abi-coder.ts, defaultMaxInflation). */
const MAX_INFLATION = 1024;

/** What a decode makes and copies. */
export type DecodeCounts = { values: number; bytes: number; addresses: number; copied: number };

/** The counts' weight in bytes of the call's budget (ethers-bounds.ts). */
export type DecodeWeights = (counts: DecodeCounts) => number;

type Shape =
  | { kind: "word"; address: boolean } // uintN, intN, bool, address: one word
  | { kind: "fixed"; size: number } // bytesN
  | { kind: "bytes" } // bytes, string: a length, then the bytes
  | { kind: "null" } // the empty type: reads nothing
  | { kind: "array"; child: Shape; length: number; dynamic: boolean }
  | { kind: "tuple"; items: Shape[]; dynamic: boolean };

const isDynamic = (s: Shape): boolean => s.kind === "bytes" || ((s.kind === "array" || s.kind === "tuple") && s.dynamic);

function shapeOf(p: ParamType): Shape {
  if (p.isArray()) {
    const child = shapeOf(p.arrayChildren);
    return { kind: "array", child, length: p.arrayLength, dynamic: p.arrayLength === -1 || isDynamic(child) };
  }
  if (p.isTuple()) {
    const items = p.components.map(shapeOf);
    return { kind: "tuple", items, dynamic: items.some(isDynamic) };
  }
  if (p.baseType === "string" || p.baseType === "bytes") return { kind: "bytes" };
  if (p.baseType === "") return { kind: "null" };
  const fixed = /^bytes(\d+)$/.exec(p.type);
  if (fixed) return { kind: "fixed", size: Number(fixed[1]) };
  return { kind: "word", address: p.baseType === "address" };
}

/** Ends the whole decode, as ethers' BUFFER_OVERRUN does (and ends the walk: ethers stops there too). */
class Overrun extends Error {}
/** Ends one value, as an error ethers keeps in that value's place (an offset or a length past 2^53). */
class ValueError extends Error {}
/** The counts passed the budget. */
class OverBudget extends Error {}

/** A Reader: its data is the decode's data from `start` to the end; `offset` is where it reads next. */
type Reader = { start: number; offset: number; length: number };

class Walk {
  readonly counts: DecodeCounts = { values: 0, bytes: 0, addresses: 0, copied: 0 };
  private read = 0; // ethers' #bytesRead, kept by the root reader for the whole decode

  constructor(
    private readonly data: Uint8Array,
    private readonly allowLoose: boolean,
    private readonly weigh: DecodeWeights,
    private readonly budget: number,
  ) {}

  private count(key: keyof DecodeCounts, n: number): void {
    this.counts[key] += n;
    if (this.weigh(this.counts) > this.budget) throw new OverBudget();
  }

  root(): Reader {
    this.count("copied", this.data.length); // new Reader(data) copies it
    return { start: 0, offset: 0, length: this.data.length };
  }

  /** reader.subReader(offset): a copy of the reader's data from its position + offset to the end. */
  private sub(r: Reader, offset: number): Reader {
    const start = Math.min(this.data.length, r.start + r.offset + offset);
    this.count("copied", this.data.length - start);
    return { start, offset: 0, length: this.data.length - start };
  }

  /** reader.readBytes(length, loose): where the bytes are; a BUFFER_OVERRUN past the data or past 1024x. */
  private readBytes(r: Reader, length: number, loose = false): number {
    let aligned = Math.ceil(length / WORD) * WORD;
    if (r.offset + aligned > r.length) {
      if (this.allowLoose && loose && r.offset + length <= r.length) aligned = length;
      else throw new Overrun();
    }
    this.read += length;
    // #incrementBytesRead builds its error's details (a copy of all the data) before it checks.
    this.count("copied", this.data.length + aligned + length);
    if (this.read > MAX_INFLATION * this.data.length) throw new Overrun();
    const at = r.start + r.offset;
    r.offset += aligned;
    return at;
  }

  /** reader.readIndex(): a word as a number; past 2^53 ethers throws "overflow" (not an overrun). */
  private readIndex(r: Reader): number {
    const at = this.readBytes(r, WORD);
    for (let i = at; i < at + 25; i++) if (this.data[i] !== 0) throw new ValueError();
    if (this.data[at + 25] > 0x1f) throw new ValueError();
    let n = 0;
    for (let i = at + 25; i < at + WORD; i++) n = n * 256 + this.data[i];
    return n;
  }

  /** unpack(reader, coders): `n` values of the shapes `shape(i)`, dynamic ones at their offsets. */
  unpack(r: Reader, n: number, shape: (i: number) => Shape): void {
    this.count("values", n + 1); // the values, and the Result that holds them
    const base = this.sub(r, 0);
    for (let i = 0; i < n; i++) {
      const s = shape(i);
      const at = isDynamic(s) ? this.sub(base, this.readIndex(r)) : r;
      try {
        this.decode(s, at);
      } catch (err) {
        if (!(err instanceof ValueError)) throw err; // ethers keeps other errors as the value and goes on
      }
    }
  }

  private decode(s: Shape, r: Reader): void {
    switch (s.kind) {
      case "word":
        this.readBytes(r, WORD);
        if (s.address) this.count("addresses", 1);
        return;
      case "fixed":
        this.readBytes(r, s.size);
        this.count("bytes", s.size);
        return;
      case "null":
        this.readBytes(r, 0);
        return;
      case "bytes": {
        const length = this.readIndex(r);
        this.readBytes(r, length, true);
        this.count("bytes", length);
        return;
      }
      case "tuple":
        return this.unpack(r, s.items.length, (i) => s.items[i]);
      case "array": {
        let n = s.length;
        if (n === -1) {
          n = this.readIndex(r);
          this.count("copied", r.length); // the check's error details: a copy of the reader's data
          if (n * WORD > r.length) throw new Overrun();
        }
        return this.unpack(r, n, () => s.child);
      }
    }
  }
}

/**
 * What decoding `params` from `data` would make and copy, or null when it would pass `budget` (as
 * weighed by `weigh`). A decode that ethers would end early is counted up to there (`fails`: ethers
 * throws, an overrun or an offset past 2^53 at the top).
 */
export function decodeCounts(params: readonly ParamType[], data: Uint8Array, loose: boolean, weigh: DecodeWeights, budget: number): (DecodeCounts & { fails: boolean }) | null {
  const shapes = params.map(shapeOf);
  const walk = new Walk(data, loose, weigh, budget);
  let fails = false;
  try {
    walk.unpack(walk.root(), shapes.length, (i) => shapes[i]);
  } catch (err) {
    if (err instanceof OverBudget) return null;
    if (!(err instanceof Overrun || err instanceof ValueError)) throw err;
    fails = true;
  }
  return { ...walk.counts, fails };
}
