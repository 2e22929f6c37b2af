/**
 * What one call of the ethers shim may cost the sandbox process. ethers runs in the process's own
 * heap, outside QuickJS's memory limit, and some of its functions allocate what their arguments
 * ask for (`zeroPadValue(data, 4e9)` is a 4 GB buffer) or many times what they were given (ABI
 * encoding makes 32 bytes of each `1,` of an array, `toUtf8Bytes` 3 bytes of a character). So each
 * call is measured before ethers sees it, against `shimBytes(limits)`, half the run's memory (what
 * a call answers travels back into QuickJS as hex text, twice its bytes):
 *   - its arguments' JSON values, counted on the text before it is parsed (32 bytes each: what one
 *     value takes in an ABI word, and more than the parser's object for it);
 *   - once parsed, every value (32 bytes), every byte, and 3 bytes per character of text;
 *   - every length the call is asked to produce (`zeroPadValue`'s length, `toBeHex`'s width), and
 *     the values the types of `abiDecode` describe (fixed-size arrays multiplied out), which the
 *     data must hold 32 bytes each of, as ethers already requires of dynamic arrays (for the v5
 *     Interface operations, the types of the fragment they name: outputs, inputs, an event's
 *     non-indexed inputs, a revert's error).
 * Past it the call throws SandboxLimitError("memoryBytes") before anything is allocated. ABI types
 * (type strings, fragments) nest at most MAX_TYPE_DEPTH levels, and arguments at most
 * MAX_ARGS_DEPTH: ethers parses both recursively, on this process's stack.
 */
import { ErrorFragment, EventFragment, Fragment, FunctionFragment, ParamType } from "ethers";
import { jsonTextValues } from "../../../protocol/json";
import { limitMessage, SandboxLimitError } from "../errors";
import type { RunLimits } from "../types";

/** Bytes of one ABI word: what each value costs at least. */
const WORD = 32;

/** Bytes one ethers call may handle: half the run's memory. */
export const shimBytes = (limits: RunLimits): number => Math.floor(limits.memoryBytes / 2);

const tooLarge = (limits: RunLimits) => new SandboxLimitError("memoryBytes", limitMessage("memoryBytes", limits));

/** Deepest nesting of the arguments' JSON (arrays and objects). */
export const MAX_ARGS_DEPTH = 128;
/** Deepest nesting of an ABI type: tuples and arrays, "(" and "[" in a type string or a fragment's JSON. */
export const MAX_TYPE_DEPTH = 64;

/** Which arguments of each call are ABI types (type strings, ParamTypes, fragments as JSON, an ABI). */
const TYPE_ARGS: Record<string, number[]> = {
  abiEncode: [0], abiDecode: [0], abiDecode5: [0], solidityPacked: [0], solidityPackedKeccak256: [0], solidityPackedSha256: [0],
  abiParse5: [0], fragmentsFormat5: [0], paramParse5: [0], paramFormat5: [0], signature5: [1], encodeFunctionData5: [0], decodeFunctionData5: [0],
  encodeFunctionResult5: [0], decodeFunctionResult5: [0, 2], encodeDeploy5: [0], encodeErrorResult5: [0], decodeErrorResult5: [0],
  encodeFilterTopics5: [0], encodeEventLog5: [0], decodeEventLog5: [0],
};

/** Refuses arguments (as JSON text) holding more values than the call may handle, or nested too deep, before they are parsed. */
export function checkArgsText(argsJson: string, limits: RunLimits): void {
  const most = Math.floor(shimBytes(limits) / WORD);
  if (argsJson.length > 2 * shimBytes(limits) || jsonTextValues(argsJson, most) > most) throw tooLarge(limits);
  if (jsonTextDepth(argsJson) > MAX_ARGS_DEPTH) throw new RangeError(`the arguments nest more than ${MAX_ARGS_DEPTH} levels deep`);
}

/** Refuses parsed arguments (and the sizes they ask for) past what the call may handle. */
export function checkArgs(name: string, args: unknown[], limits: RunLimits): void {
  for (const i of TYPE_ARGS[name] ?? []) {
    if (typeDepth(args[i]) > MAX_TYPE_DEPTH) throw new RangeError(`ABI types nest more than ${MAX_TYPE_DEPTH} levels deep`);
  }
  const budget = shimBytes(limits);
  if (argsBytes(args) > budget || askedBytes(name, args) > budget) throw tooLarge(limits);
}

/** How deep JSON text nests its arrays and objects (brackets inside strings do not count). */
function jsonTextDepth(text: string): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) deepest = Math.max(deepest, ++depth);
    else if (c === 0x5d || c === 0x7d) depth--;
  }
  return deepest;
}

/** How deep an ABI type nests: "(" and "[" in its strings, one level more for each array or object that holds it. */
function typeDepth(value: unknown): number {
  if (typeof value === "string") {
    let depth = 0;
    let deepest = 0;
    for (let i = 0; i < value.length; i++) {
      const c = value.charCodeAt(i);
      if (c === 0x28 || c === 0x5b) deepest = Math.max(deepest, ++depth);
      else if (c === 0x29 || c === 0x5d) depth--;
    }
    return deepest;
  }
  if (value === null || typeof value !== "object") return 0;
  let deepest = 0;
  for (const child of Object.values(value)) deepest = Math.max(deepest, typeDepth(child));
  return deepest + 1;
}

/** 32 bytes per value, plus every byte and 3 bytes per character (a character's most in UTF-8). */
function argsBytes(args: unknown[]): number {
  let bytes = 0;
  const stack: unknown[] = [args];
  while (stack.length > 0) {
    const v = stack.pop();
    bytes += WORD;
    if (typeof v === "string") bytes += 3 * v.length;
    else if (v instanceof Uint8Array) bytes += v.length;
    else if (v !== null && typeof v === "object") for (const [key, child] of Object.entries(v)) (bytes += 3 * key.length), stack.push(child);
  }
  return bytes;
}

/** What the call is asked to produce beyond its arguments, in bytes (0 for most calls). */
function askedBytes(name: string, args: unknown[]): number {
  switch (name) {
    case "zeroPadValue":
    case "zeroPad":
      return size(args[1]);
    case "hexZeroPad":
      return 2 * size(args[1]); // hex text: two characters a byte
    case "toBeHex":
      return args[1] == null ? 0 : size(args[1]);
    case "abiDecode":
    case "abiDecode5":
      return decodedBytes(describedValues(args[0]), args[1]);
    case "decodeFunctionData5":
      return decodedBytes(paramsValues(FunctionFragment.from(JSON.parse(args[0] as string)).inputs), args[1]);
    case "decodeErrorResult5":
      return decodedBytes(paramsValues(ErrorFragment.from(JSON.parse(args[0] as string)).inputs), args[1]);
    case "decodeEventLog5":
      return decodedBytes(paramsValues(EventFragment.from(JSON.parse(args[0] as string)).inputs.filter((p) => !p.indexed)), args[1]);
    case "decodeFunctionResult5": {
      // v5 decodes the outputs from data of whole words, and a revert's error from data of whole words + a selector.
      const outputs = dataBytes(args[1]) % WORD === 0 ? paramsValues(FunctionFragment.from(JSON.parse(args[0] as string)).outputs) : 0;
      const error = typeof args[2] === "string" ? paramsValues(Fragment.from(JSON.parse(args[2])).inputs) : 0;
      return decodedBytes(Math.max(outputs, error, 1), args[1]);
    }
    default:
      return 0;
  }
}

const dataBytes = (data: unknown): number => (data instanceof Uint8Array ? data.length : typeof data === "string" ? data.length / 2 : 0);

/** Each value the types describe takes one word of the data at least: types that describe more ask for that much. */
function decodedBytes(values: number, data: unknown): number {
  return values * WORD > dataBytes(data) ? values * WORD : 0;
}

/** A length argument as a size in bytes (anything that is not a number ethers would refuse: 0 here). */
const size = (v: unknown): number => (typeof v === "number" && Number.isFinite(v) ? Math.max(0, v) : typeof v === "bigint" ? Number(v) : 0);

/** How many values ABI types describe, fixed-size arrays multiplied out (a dynamic array counts as one: ethers checks its length against the data). */
function describedValues(types: unknown): number {
  if (!Array.isArray(types)) return 0;
  let total = 0;
  for (const type of types) {
    let param: ParamType;
    try {
      param = ParamType.from(type as string);
    } catch {
      return 0; // ethers refuses it itself, before decoding
    }
    total += valuesOf(param);
  }
  return total;
}

const paramsValues = (params: readonly ParamType[]): number => params.reduce((sum, p) => sum + valuesOf(p), 0);

function valuesOf(param: ParamType): number {
  if (param.isArray()) return param.arrayLength < 0 ? 1 : param.arrayLength * valuesOf(param.arrayChildren);
  if (param.isTuple()) return Math.max(1, param.components.reduce((sum, c) => sum + valuesOf(c), 0));
  return 1;
}
