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
 *     data must hold 32 bytes each of, as ethers already requires of dynamic arrays.
 * Past it the call throws SandboxLimitError("memoryBytes") before anything is allocated.
 */
import { ParamType } from "ethers";
import { jsonTextValues } from "../../../protocol/json";
import { limitMessage, SandboxLimitError } from "../errors";
import type { RunLimits } from "../types";

/** Bytes of one ABI word: what each value costs at least. */
const WORD = 32;

/** Bytes one ethers call may handle: half the run's memory. */
export const shimBytes = (limits: RunLimits): number => Math.floor(limits.memoryBytes / 2);

const tooLarge = (limits: RunLimits) => new SandboxLimitError("memoryBytes", limitMessage("memoryBytes", limits));

/** Refuses arguments (as JSON text) holding more values than the call may handle, before they are parsed. */
export function checkArgsText(argsJson: string, limits: RunLimits): void {
  const most = Math.floor(shimBytes(limits) / WORD);
  if (argsJson.length > 2 * shimBytes(limits) || jsonTextValues(argsJson, most) > most) throw tooLarge(limits);
}

/** Refuses parsed arguments (and the sizes they ask for) past what the call may handle. */
export function checkArgs(name: string, args: unknown[], limits: RunLimits): void {
  const budget = shimBytes(limits);
  if (argsBytes(args) > budget || askedBytes(name, args) > budget) throw tooLarge(limits);
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
      return size(args[1]);
    case "toBeHex":
      return args[1] == null ? 0 : size(args[1]);
    case "abiDecode": {
      const values = describedValues(args[0]);
      const data = args[1] instanceof Uint8Array ? args[1].length : typeof args[1] === "string" ? args[1].length / 2 : 0;
      // Each value the types describe takes one word of the data at least: types that describe more are refused.
      return values * WORD > data ? values * WORD : 0;
    }
    default:
      return 0;
  }
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

function valuesOf(param: ParamType): number {
  if (param.isArray()) return param.arrayLength < 0 ? 1 : param.arrayLength * valuesOf(param.arrayChildren);
  if (param.isTuple()) return Math.max(1, param.components.reduce((sum, c) => sum + valuesOf(c), 0));
  return 1;
}
