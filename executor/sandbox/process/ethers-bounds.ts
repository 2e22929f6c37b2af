/**
 * What one call of the ethers shim may cost the sandbox process. ethers runs in the process's own
 * heap, outside QuickJS's memory limit and its interrupt handler: a call cannot be stopped once it
 * runs (the deadline's hard stop kills the whole process), and some of ethers' functions allocate
 * or work far more than their arguments' size says (`zeroPadValue(data, 4e9)` is a 4 GB buffer, ABI
 * encoding makes 32 bytes of each `1,` of an array and hexes each of them a byte at a time, a
 * decode makes what the data's offsets say, the cycle check of typed data walks every path). So
 * each call is measured before ethers sees it, against `shimBytes(limits)`, half the run's memory
 * (what a call answers travels back into QuickJS as hex text, twice its bytes). The measure is in
 * bytes of memory, and ethers' work is weighed in the same units, a byte for ~8 ns of it on a busy
 * 2-core machine (WORK_NS), so a call within the budget also ends in well under a second:
 *   - its arguments' JSON values, counted on the text before it is parsed (32 bytes each: what one
 *     value takes in an ABI word, and more than the parser's object for it);
 *   - once parsed, every value (32 bytes), every byte, and 3 bytes per character of text, plus
 *     the work the call does with each value and each byte or character (WORK: measured per call);
 *   - what the call is asked to produce beyond its arguments (askedBytes): `zeroPadValue`'s length,
 *     `toBeHex`'s width, a normalization's expansion, the items of an RLP decode, what typed data
 *     makes (typed-data-cost.ts);
 *   - what each ABI decode makes and copies, counted on its data (abi-decode-cost.ts) by
 *     `checkDecode`, which every decode (ethers5-abi.ts) runs first, within what the call has left.
 * Past it the call throws SandboxLimitError("memoryBytes") before ethers allocates anything. Caps
 * (RangeErrors): ABI types (type strings, fragments, typed data's types) nest at most MAX_TYPE_DEPTH
 * levels, arguments and RLP data MAX_ARGS_DEPTH (ethers parses them recursively, on this process's
 * stack); ENS names are at most MAX_NAME_CHARS characters of MAX_NAME_LABELS labels (ethers' dnsEncode
 * writes the whole name for each label); typed data at most MAX_TYPED_TYPES struct types and
 * MAX_TYPED_FIELDS fields; a transaction's access list MAX_ACCESS_LIST_ITEMS items.
 */
import type { ParamType } from "ethers";
import { jsonTextValues } from "../../../protocol/json";
import { limitMessage, SandboxLimitError } from "../errors";
import type { RunLimits } from "../types";
import { type DecodeCounts, decodeCounts } from "./abi-decode-cost";
import { isHexBytes } from "./tagged-json";
import { type TypedDataCounts, typedDataCounts } from "./typed-data-cost";

/** Bytes of one ABI word: what each value costs at least. */
const WORD = 32;

/** Bytes one ethers call may handle: half the run's memory. */
export const shimBytes = (limits: RunLimits): number => Math.floor(limits.memoryBytes / 2);

const tooLarge = (limits: RunLimits) => new SandboxLimitError("memoryBytes", limitMessage("memoryBytes", limits));

/** Deepest nesting of the arguments' JSON (arrays and objects), and of RLP data. */
export const MAX_ARGS_DEPTH = 128;
/** Deepest nesting of an ABI type: tuples and arrays, "(" and "[" in a type string or a fragment's JSON. */
export const MAX_TYPE_DEPTH = 64;
/** Longest ENS name, in characters (UTF-16): DNS names are at most 255 bytes; ENS names in use far shorter. */
export const MAX_NAME_CHARS = 1024;
/** Most labels of an ENS name: the most a DNS name of 255 bytes holds (one-letter labels). */
export const MAX_NAME_LABELS = 127;
/** Most addresses and storage keys of a transaction's access list (ethers' RLP encoding is quadratic in a list's items: 1,024 take ~0.1 s). */
export const MAX_ACCESS_LIST_ITEMS = 1024;
/** Most authorizations (EIP-7702) of a transaction. */
export const MAX_AUTHORIZATIONS = 64;

/**
 * Nanoseconds of ethers' work a byte of the budget stands for: with 32 MB for a call (the default
 * 64 MB run), ~250 ms of one CPU of a loaded 2-core machine at most, ~100 ms idle.
 */
export const WORK_NS = 8;

/**
 * The work a call does with each JSON value, each byte and each character of its arguments, in
 * bytes of the budget beyond holding them: measured per call on its slowest input on a loaded 2-core
 * machine, divided by WORK_NS. The default is what any call may cost: ethers' errors write the
 * value they refuse into their message, bytes as hex a byte at a time (~200 ns a byte), arrays a
 * value at a time (~1.5 us). Calls named here are cheaper per byte (they refuse no bytes: hashes,
 * base64, RLP) or dearer (they hex what they make, encode each value into a word, parse types).
 */
type Work = { value: number; byte: number; char: number };
const DEFAULT_WORK: Work = { value: 200, byte: 26, char: 2 };
const NO_WORK: Work = { value: 0, byte: 0, char: 0 };
const work = (w: Partial<Work>): Work => ({ ...DEFAULT_WORK, ...w });
const HASH = work({ byte: 3, char: 3 }); // Node's hashes, base64
const ENCODE = work({ value: 3000, byte: 60, char: 120 }); // ABI encoding: each value a word (or three), hexed
const TYPES = work({ char: 40 }); // ABI types parsed (and their structure counted by typeTextBytes)
const WORK: Record<string, Work> = {
  keccak256: work({ byte: 13, char: 13 }),
  sha256: HASH,
  sha512: HASH,
  computeHmac: HASH,
  encodeBase64: HASH,
  decodeBase64: HASH,
  ripemd160: work({ byte: 4, char: 4 }),
  id: work({ char: 22 }),
  toUtf8Bytes: work({ char: 8 }),
  toUtf8CodePoints: work({ char: 24 }),
  toUtf8StringWith: work({ byte: 26 }),
  encodeBytes32String: work({ char: 8 }),
  hashMessage: work({ byte: 40, char: 60 }),
  verifyMessage: work({ byte: 40, char: 60 }),
  signMessage: work({ byte: 40, char: 60 }),
  getBytes: work({ char: 8 }),
  dataLength: work({ char: 4 }),
  getCreate2Address: work({ byte: 32 }),
  encodeRlp: work({ value: 300, byte: 4 }),
  decodeRlp: work({ byte: 8, char: 8 }),
  abiEncode: ENCODE,
  encodeFunctionData5: ENCODE,
  encodeFunctionResult5: ENCODE,
  encodeDeploy5: ENCODE,
  encodeErrorResult5: ENCODE,
  encodeFilterTopics5: ENCODE,
  encodeEventLog5: ENCODE,
  solidityPacked: work({ value: 2000, byte: 50, char: 100 }),
  solidityPackedKeccak256: work({ value: 2000, byte: 60, char: 120 }),
  solidityPackedSha256: work({ value: 2000, byte: 50, char: 100 }),
  signTransaction: work({ value: 4000, byte: 90, char: 90 }),
  typedDataHash: work({ value: 2000, char: 26 }),
  typedDataHashStruct: work({ value: 2000, char: 26 }),
  typedDataEncode: work({ value: 2000, char: 26 }),
  typedDataPayload: work({ value: 2000, char: 26 }),
  typedDataHashDomain: work({ char: 32 }),
  typedDataPrimaryType: work({ char: 26 }),
  signTypedData: work({ value: 2000, char: 26 }),
  verifyTypedData: work({ value: 2000, char: 26 }),
  abiParse5: TYPES,
  fragmentsFormat5: TYPES,
  paramParse5: TYPES,
  paramFormat5: TYPES,
  signature5: TYPES,
  parseUnits: work({ char: 40 }),
  parseEther: work({ char: 40 }),
  formatUnits: work({ char: 40 }),
  formatEther: work({ char: 40 }),
  getCreateAddress: work({ char: 40 }),
  // An ABI decode's data: a failed one writes all of it into its error (the decode's own work is checkDecode's).
  abiDecode: work({ char: 13 }),
  abiDecode5: work({ char: 13 }),
  decodeFunctionData5: work({ char: 13 }),
  decodeFunctionResult5: work({ char: 13 }),
  decodeErrorResult5: work({ char: 13 }),
  decodeEventLog5: work({ char: 14 }), // and its topics: concatenated and hexed
};

/** Which arguments of each call are ABI types (type strings, ParamTypes, fragments as JSON, an ABI, typed data's types). */
const TYPE_ARGS: Record<string, number[]> = {
  abiEncode: [0], abiDecode: [0], abiDecode5: [0], solidityPacked: [0], solidityPackedKeccak256: [0], solidityPackedSha256: [0],
  abiParse5: [0], fragmentsFormat5: [0], paramParse5: [0], paramFormat5: [0], signature5: [1], encodeFunctionData5: [0], decodeFunctionData5: [0],
  encodeFunctionResult5: [0], decodeFunctionResult5: [0, 2], encodeDeploy5: [0], encodeErrorResult5: [0], decodeErrorResult5: [0],
  encodeFilterTopics5: [0], encodeEventLog5: [0], decodeEventLog5: [0],
  typedDataHash: [1], verifyTypedData: [1], signTypedData: [2], typedDataHashStruct: [1], typedDataPrimaryType: [0], typedDataEncode: [1], typedDataPayload: [1],
};

/** The calls that read an ENS name (their first argument). */
const NAME_CALLS = new Set(["namehash", "dnsEncode", "isValidName"]);

/** Refuses arguments (as JSON text) holding more values than the call may handle, or nested too deep, before they are parsed. */
export function checkArgsText(argsJson: string, limits: RunLimits): void {
  const most = Math.floor(shimBytes(limits) / WORD);
  if (argsJson.length > 2 * shimBytes(limits) || jsonTextValues(argsJson, most) > most) throw tooLarge(limits);
  if (jsonTextDepth(argsJson) > MAX_ARGS_DEPTH) throw new RangeError(`the arguments nest more than ${MAX_ARGS_DEPTH} levels deep`);
}

/** Refuses parsed arguments (and the sizes they ask for) past what a call may handle: a helper's (no work weighed). */
export function checkArgs(name: string, args: unknown[], limits: RunLimits): number {
  return check(name, args, limits, NO_WORK);
}

/**
 * Refuses an ethers call's parsed arguments past what the call may handle: their size, the work
 * ethers does with them (WORK), what they ask it to produce; answers the bytes of the budget they
 * take (the rest is what the call's decodes may use: checkDecode).
 */
export function checkEthersCall(name: string, args: unknown[], limits: RunLimits): number {
  return check(name, args, limits, WORK[name] ?? DEFAULT_WORK);
}

function check(name: string, args: unknown[], limits: RunLimits, w: Work): number {
  for (const i of TYPE_ARGS[name] ?? []) {
    if (typeDepth(args[i]) > MAX_TYPE_DEPTH) throw new RangeError(`ABI types nest more than ${MAX_TYPE_DEPTH} levels deep`);
  }
  if (NAME_CALLS.has(name)) checkName(args[0]);
  const budget = shimBytes(limits);
  const { values, bytes, chars } = argsCounts(args);
  const used = values * (WORD + w.value) + bytes * (1 + w.byte) + chars * (3 + w.char);
  if (used > budget) throw tooLarge(limits);
  const asked = askedBytes(name, args, budget - used);
  if (asked === null || used + asked > budget) throw tooLarge(limits);
  return used + asked;
}

/**
 * The call now running, and what its budget has left for its ABI decodes: set by `withinCall`
 * around the call (calls are synchronous, one at a time in this process).
 */
let running: { limits: RunLimits; left: number } | null = null;

/** Runs `call` with `left` bytes of its budget for its decodes (checkDecode). */
export function withinCall<T>(limits: RunLimits, left: number, call: () => T): T {
  const outer = running;
  running = { limits, left };
  try {
    return call();
  } finally {
    running = outer;
  }
}

/**
 * The weight of what an ABI decode makes and copies (measured as WORK): a value ~2.4 us (its coder,
 * its Result slot, its copy in v5's shape or toArray, its JSON), a byte of `bytes` ~270 ns (ethers'
 * hex, a byte at a time), an address's checksum ~10 us, a copied byte ~0.7 ns.
 */
const decodeWeight = (c: DecodeCounts): number => c.values * 300 + c.bytes * 34 + c.addresses * 1200 + c.copied / 12;

/** Refuses an ABI decode of `params` from `data` that would make or copy more than the running call has left (abi-decode-cost.ts). */
export function checkDecode(params: readonly ParamType[], data: Uint8Array, loose: boolean): void {
  if (!running) throw new Error("checkDecode: no ethers call is running");
  const counts = decodeCounts(params, data, loose, decodeWeight, running.left);
  if (!counts) throw tooLarge(running.limits);
  running.left -= decodeWeight(counts);
}

/** An ENS name within MAX_NAME_CHARS and MAX_NAME_LABELS (ENSIP-15 reads ".", "。", "．" and "｡" as separators). */
function checkName(name: unknown): void {
  if (typeof name !== "string") return;
  if (name.length > MAX_NAME_CHARS) throw new RangeError(`an ENS name may have at most ${MAX_NAME_CHARS} characters, got ${name.length}`);
  const labels = 1 + (name.match(/[.\u3002\uff0e\uff61]/g)?.length ?? 0);
  if (labels > MAX_NAME_LABELS) throw new RangeError(`an ENS name may have at most ${MAX_NAME_LABELS} labels, got ${labels}`);
}

/** How deep JSON text nests its arrays and objects (brackets inside strings do not count; a string is skipped whole). */
function jsonTextDepth(text: string): number {
  let depth = 0;
  let deepest = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      let end = i;
      do {
        end = text.indexOf('"', end + 1);
        if (end < 0) return deepest; // unterminated: not JSON, JSON.parse refuses it
      } while (escaped(text, end));
      i = end;
    } else if (c === 0x5b || c === 0x7b) deepest = Math.max(deepest, ++depth);
    else if (c === 0x5d || c === 0x7d) depth--;
  }
  return deepest;
}

/** Whether the quote at `at` is escaped (an odd number of backslashes before it). */
function escaped(text: string, at: number): boolean {
  let slashes = 0;
  while (text.charCodeAt(at - 1 - slashes) === 0x5c) slashes++;
  return slashes % 2 === 1;
}

/** How deep an ABI type nests: "(" and "[" in its strings, one level more for each array or object that holds it. */
function typeDepth(value: unknown): number {
  if (typeof value === "string") {
    let depth = 0;
    let deepest = 0;
    let dimensions = 0; // "[]" after "[]": each an array of the one before
    for (let i = 0; i < value.length; i++) {
      const c = value.charCodeAt(i);
      if (c === 0x28 || c === 0x5b) deepest = Math.max(deepest, ++depth + dimensions);
      else if (c === 0x29) (depth--, (dimensions = 0));
      else if (c === 0x5d) (depth--, dimensions++);
      else if (c !== 0x20 && (c < 0x30 || c > 0x39)) dimensions = 0;
    }
    return deepest;
  }
  if (value === null || typeof value !== "object") return 0;
  let deepest = 0;
  for (const child of Object.values(value)) deepest = Math.max(deepest, typeDepth(child));
  return deepest + 1;
}

/** The arguments' values, bytes and characters (of strings and of keys). */
function argsCounts(args: unknown[]): { values: number; bytes: number; chars: number } {
  let values = 0;
  let bytes = 0;
  let chars = 0;
  const stack: unknown[] = [args];
  while (stack.length > 0) {
    const v = stack.pop();
    values++;
    if (typeof v === "string") chars += v.length;
    else if (v instanceof Uint8Array) bytes += v.length;
    else if (Array.isArray(v)) for (const child of v) stack.push(child);
    else if (v !== null && typeof v === "object") for (const [key, child] of Object.entries(v)) (chars += key.length), stack.push(child);
  }
  return { values, bytes, chars };
}

/** What the call is asked to produce beyond its arguments, in bytes (0 for most calls), or null past `left`. */
function askedBytes(name: string, args: unknown[], left: number): number | null {
  switch (name) {
    case "zeroPadValue":
      return size(args[1]) * (1 + DEFAULT_WORK.byte); // made here, and hexed
    case "zeroPad":
      return size(args[1]); // v5's zeroPad and hexZeroPad run in QuickJS: only their memory is asked here
    case "hexZeroPad":
      return 2 * size(args[1]); // hex text: two characters a byte
    case "toBeHex":
      return args[1] == null ? 0 : size(args[1]) * (1 + DEFAULT_WORK.byte);
    case "toUtf8Bytes":
    case "toUtf8CodePoints":
      return normalized(args[0], args[1]) * (3 + WORK.toUtf8CodePoints.char);
    case "decodeRlp":
      return rlpBytes(args[0], left);
    case "typedDataHash":
    case "typedDataEncode":
    case "typedDataPayload":
    case "verifyTypedData":
      return typedBytes(args[1], args[2], null, left);
    case "signTypedData":
      return typedBytes(args[2], args[3], null, left);
    case "typedDataHashStruct":
      return typedBytes(args[1], args[2], typeof args[0] === "string" ? args[0] : null, left);
    case "typedDataPrimaryType":
      return typedBytes(args[0], undefined, null, left);
    case "signTransaction":
      return transactionLists(args[1]);
    default:
      return (TYPE_ARGS[name] ?? []).reduce((sum, i) => sum + typeTextBytes(args[i], FRAGMENT_CALLS.has(name) ? 16_000 : 500), 0);
  }
}

/**
 * What ethers' parsers do with ABI types as text, per tuple, item and array: a human-readable
 * fragment ~130 us (`perString`: lexed, made, formatted back as v5 describes it, hashed for its
 * selector; a type ~4 us), and ~18 us each "(", "," and "[", JSON ~4 us each "{", ",", ":" and "[".
 */
const FRAGMENT_CALLS = new Set(["abiParse5", "fragmentsFormat5", "signature5"]);
function typeTextBytes(types: unknown, perString: number): number {
  let bytes = 0;
  const stack: unknown[] = [types];
  while (stack.length > 0) {
    const v = stack.pop();
    if (typeof v === "string") {
      const json = /^\s*[[{]/.test(v);
      const marks = v.match(json ? /[{,:[]/g : /[(,[]/g)?.length ?? 0;
      bytes += json ? marks * 500 : perString + marks * 2250;
    } else if (v !== null && typeof v === "object") for (const child of Object.values(v)) stack.push(child);
  }
  return bytes;
}

function transactionLists(tx: unknown): number {
  if (tx === null || typeof tx !== "object") return 0;
  const { accessList, authorizationList } = tx as Record<string, unknown>;
  let items = 0;
  if (accessList !== null && typeof accessList === "object") {
    for (const entry of Object.values(accessList)) {
      items++;
      const keys = Array.isArray(entry) ? (Array.isArray(entry[1]) ? entry[1] : entry) : entry !== null && typeof entry === "object" ? (entry as { storageKeys?: unknown }).storageKeys : null;
      if (Array.isArray(keys)) items += keys.length;
    }
  }
  if (items > MAX_ACCESS_LIST_ITEMS) throw new RangeError(`a transaction's access list may hold at most ${MAX_ACCESS_LIST_ITEMS} addresses and storage keys, got ${items}`);
  if (Array.isArray(authorizationList) && authorizationList.length > MAX_AUTHORIZATIONS) throw new RangeError(`a transaction may hold at most ${MAX_AUTHORIZATIONS} authorizations, got ${authorizationList.length}`);
  return 0;
}

/** A length argument as a size in bytes (anything that is not a number ethers would refuse: 0 here). */
const size = (v: unknown): number => (typeof v === "number" && Number.isFinite(v) ? Math.max(0, v) : typeof v === "bigint" ? Number(v) : 0);

/** The characters a Unicode normalization may make of `text`: NFC 3 times, NFD 4, NFKC and NFKD 18 (Unicode's bounds, UAX #15). */
function normalized(text: unknown, form: unknown): number {
  if (typeof text !== "string" || typeof form !== "string" || form === "") return 0;
  return text.length * (form === "NFC" ? 3 : form === "NFD" ? 4 : 18);
}

/** The weight of hashing typed data: a path of the cycle check ~100 ns, a type's character parsed and copied ~16 ns, a word ~12 us (encoded, hexed, hashed), a hashed byte ~100 ns. */
const typedWeight = (c: TypedDataCounts): number => c.steps * 12 + c.chars * 2 + c.words * 1500 + c.bytes * 13;

function typedBytes(types: unknown, value: unknown, primary: string | null, left: number): number | null {
  const counts = typedDataCounts(types, value, primary, typedWeight, left);
  return counts && typedWeight(counts);
}

/**
 * What decoding RLP data makes: each item a hex string (~400 ns), each byte of them two characters
 * (ethers' hex: ~200 ns); lists nest at most MAX_ARGS_DEPTH deep (a RangeError past it). Counted on
 * the data as ethers' decodeRlp reads it, up to where it would throw.
 */
function rlpBytes(data: unknown, left: number): number | null {
  const bytes = data instanceof Uint8Array ? data : typeof data === "string" && isHexBytes(data) ? Buffer.from(data.slice(2), "hex") : null;
  if (!bytes || bytes.length === 0) return 0;
  const ITEM = 50;
  const BYTE = 26;
  let cost = 0;
  const ends: number[] = [bytes.length]; // the end of each list the position is in
  let at = 0;
  while (at < bytes.length) {
    while (ends.length > 1 && at >= ends[ends.length - 1]) ends.pop();
    if (ends.length === 1 && at > 0) break; // one item: ethers refuses what follows it
    const prefix = bytes[at];
    let head = 1;
    let length = 0;
    if (prefix >= 0xb8 && prefix < 0xc0) (head += prefix - 0xb7), (length = bigEndian(bytes, at + 1, prefix - 0xb7));
    else if (prefix >= 0xf8) (head += prefix - 0xf7), (length = bigEndian(bytes, at + 1, prefix - 0xf7));
    else if (prefix >= 0xc0) length = prefix - 0xc0;
    else if (prefix >= 0x80) length = prefix - 0x80;
    if (at + head + length > ends[ends.length - 1]) break; // ethers throws here
    cost += ITEM;
    if (prefix >= 0xc0) {
      ends.push(at + head + length);
      if (ends.length - 1 > MAX_ARGS_DEPTH) throw new RangeError(`RLP data nests more than ${MAX_ARGS_DEPTH} lists deep`);
      at += head;
    } else {
      cost += BYTE * Math.max(1, length);
      at += head + length;
    }
    if (cost > left) return null;
  }
  return cost;
}

const bigEndian = (bytes: Uint8Array, from: number, count: number): number => {
  let n = 0;
  for (let i = from; i < from + count; i++) n = n * 256 + (bytes[i] ?? 0);
  return n;
};
