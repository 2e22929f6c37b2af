/**
 * The ABI half of the ethers v5 surface (guest/ethers5-abi.js), computed by ethers v6 in the sandbox
 * process and answered in v5's shapes: fragments and param types as v5 describes them, decoded
 * values as v5's default coder gives them (integers of at most 48 bits as numbers, wider ones as
 * BigNumber, tuples and arrays as Results with their unique names), reverts as v5 reports them.
 * Fragments travel as v6's JSON format (one fragment per call: an action's whole ABI never crosses
 * again after it was parsed). Every decode, the v6 surface's included, goes through checkedDecode:
 * what the data would make is counted first (abi-decode-cost.ts), within the call's budget.
 */
import { AbiCoder, concat, ErrorFragment, EventFragment, Fragment, FunctionFragment, getBytes, hexlify, Indexed, Interface, ParamType, type BytesLike, type Result } from "ethers";
import { SandboxLimitError } from "../errors";
import { checkDecode } from "./ethers-bounds";
import { V5BigNumber, V5Result } from "./tagged-json";

const coder = AbiCoder.defaultAbiCoder();
type Format = "sighash" | "minimal" | "full" | "json";

/** A v5 ParamType as data. */
type ParamData = { name: string | null; type: string; baseType: string; indexed: boolean | null; components: ParamData[] | null; arrayLength: number | null; arrayChildren: ParamData | null };

function paramData(p: ParamType): ParamData {
  const name = p.name || null;
  if (p.isArray()) {
    const child = paramData(p.arrayChildren);
    const type = `${child.type}[${p.arrayLength < 0 ? "" : p.arrayLength}]`;
    return { name, type, baseType: "array", indexed: p.indexed, components: child.components, arrayLength: p.arrayLength, arrayChildren: child };
  }
  if (p.isTuple()) return { name, type: "tuple", baseType: "tuple", indexed: p.indexed, components: p.components.map(paramData), arrayLength: null, arrayChildren: null };
  return { name, type: p.type, baseType: p.type, indexed: p.indexed, components: null, arrayLength: null, arrayChildren: null };
}

/** A fragment as v5 describes it, with its v6 JSON (what later calls send back) and its selector or topic. */
function fragmentData(f: Fragment) {
  const base = { type: f.type, json: f.format("json"), inputs: f.inputs.map(paramData) };
  if (f instanceof FunctionFragment) {
    const { stateMutability } = f;
    return { ...base, name: f.name, signature: f.format("sighash"), selector: f.selector, outputs: f.outputs.map(paramData), stateMutability, constant: f.constant, payable: f.payable, gas: f.gas == null ? null : new V5BigNumber(f.gas) };
  }
  if (f instanceof EventFragment) return { ...base, name: f.name, signature: f.format("sighash"), selector: f.topicHash, anonymous: f.anonymous };
  if (f instanceof ErrorFragment) return { ...base, name: f.name, signature: f.format("sighash"), selector: f.selector };
  const c = f as Fragment & { payable: boolean; gas: bigint | null };
  return { ...base, name: null, signature: null, selector: null, stateMutability: c.payable ? "payable" : "nonpayable", payable: c.payable, gas: c.gas == null ? null : new V5BigNumber(c.gas) };
}

/**
 * A fragment from its JSON text, a JSON object or a human-readable string (v6's Fragment.from reads a
 * string as human-readable only: it drops what JSON.parse gave).
 */
const fragmentFrom = (item: unknown): Fragment => Fragment.from(typeof item === "string" && item.trimStart().startsWith("{") ? JSON.parse(item) : item);

/** An ABI (JSON text, or a list of human-readable strings and JSON fragments) → its fragments; fallback and receive (v6: "fallback") are left out, as v5 does. */
export function parseAbi(abi: unknown) {
  const items: unknown = typeof abi === "string" ? JSON.parse(abi) : abi;
  if (!Array.isArray(items)) throw new TypeError("the ABI must be an array or its JSON text");
  const fragments = items.map(fragmentFrom).filter((f) => (f.type as string) !== "fallback");
  return fragments.map(fragmentData);
}

/** `value` as v5's default coder decodes a `param`. */
function toV5(param: ParamType, value: unknown): unknown {
  if (Indexed.isIndexed(value)) return { _isIndexed: true, hash: value.hash };
  if (param.isArray()) return new V5Result(Array.from(value as Result, (v) => toV5(param.arrayChildren, v)), []);
  if (param.isTuple()) return resultOf(param.components, value as Result);
  const int = /^u?int(\d+)$/.exec(param.type);
  if (int) return Number(int[1]) <= 48 ? Number(value) : new V5BigNumber(value as bigint);
  return value;
}

/** A v5 Result of `params`: names that occur once name their value ("length" as "_length"). */
function resultOf(params: readonly ParamType[], values: Result): V5Result {
  const count = new Map<string, number>();
  for (const p of params) if (p.name) count.set(p.name, (count.get(p.name) ?? 0) + 1);
  const names = params.map((p) => (p.name && count.get(p.name) === 1 ? (p.name === "length" ? "_length" : p.name) : null));
  return new V5Result(params.map((p, i) => toV5(p, values[i])), names);
}

/**
 * Every ABI decode of the shim: what it would make and copy is counted on the data first, within
 * what the call has left of its budget (ethers-bounds.ts checkDecode: a SandboxLimitError past it).
 */
export function checkedDecode(params: readonly ParamType[], data: BytesLike, loose = false): Result {
  const bytes = getBytes(data);
  checkDecode(params, bytes, loose);
  return coder.decode(params, bytes, loose);
}

const decode = (params: readonly ParamType[], data: BytesLike, loose?: boolean) => resultOf(params, checkedDecode(params, data, loose === true));

/** A failed decode that is answered as "not this shape" (a revert, data of another shape), unless the call's budget ran out. */
const rethrowLimit = (err: unknown) => {
  if (err instanceof SandboxLimitError) throw err;
};

/**
 * Fragments parsed from their JSON, with their selectors (an action calls the same functions again
 * and again: parsing and hashing the signature cost more than encoding). At most 256 of at most
 * 16 KB each; emptied when a run starts (clearAbiCache), so nothing of one run is kept for the next.
 */
const parsed = new Map<string, { fragment: Fragment; key: string }>();
const CACHED_JSON_CHARS = 16 * 1024;
export const clearAbiCache = () => parsed.clear();
function fragmentOf<T extends FunctionFragment | ErrorFragment | EventFragment>(kind: { from(v: unknown): T }, json: string): { fragment: T; key: string } {
  const hit = parsed.get(json);
  if (hit && hit.fragment instanceof (kind as unknown as typeof Fragment)) return hit as { fragment: T; key: string };
  const fragment = kind.from(JSON.parse(json));
  const entry = { fragment, key: fragment instanceof EventFragment ? fragment.topicHash : (fragment as FunctionFragment | ErrorFragment).selector };
  if (json.length <= CACHED_JSON_CHARS) {
    if (parsed.size >= 256) parsed.delete(parsed.keys().next().value!);
    parsed.set(json, entry);
  }
  return entry;
}
const functionOf = (json: string) => fragmentOf(FunctionFragment, json);

/** v5's decodeFunctionResult: the result, or what the revert says (the guest throws v5's CALL_EXCEPTION with it). */
function decodeFunctionResult(json: string, data: BytesLike, errorJson: string | null) {
  const f = functionOf(json).fragment;
  const bytes = getBytes(data);
  const revert = { method: f.format("sighash"), data: hexlify(bytes), errorArgs: null as V5Result | null, errorName: null as string | null, errorSignature: null as string | null, reason: null as unknown };
  let message = "call revert exception";
  if (bytes.length % 32 === 0) {
    try {
      return { result: decode(f.outputs, bytes) };
    } catch (err) {
      rethrowLimit(err); // else not the function's outputs: a revert without data, or data of another shape
    }
  } else if (bytes.length % 32 === 4) {
    const selector = hexlify(bytes.slice(0, 4));
    const builtin = selector === "0x08c379a0" ? "Error(string)" : selector === "0x4e487b71" ? "Panic(uint256)" : null;
    const error = builtin ? ErrorFragment.from(`error ${builtin}`) : errorJson ? fragmentOf(ErrorFragment, errorJson).fragment : null;
    if (error) {
      try {
        revert.errorArgs = decode(error.inputs, bytes.slice(4));
        revert.errorName = error.name;
        revert.errorSignature = error.format("sighash");
        const first = revert.errorArgs.values[0];
        if (builtin === "Error(string)") (revert.reason = first), (message += `; VM Exception while processing transaction: reverted with reason string ${JSON.stringify(first)}`);
        if (builtin === "Panic(uint256)") message += `; VM Exception while processing transaction: reverted with panic code ${(first as V5BigNumber).value}`;
      } catch (err) {
        rethrowLimit(err); // else data that does not decode as the error: reported without its arguments
      }
    }
  }
  return { revert: { message, ...revert } };
}

function decodeFunctionData(json: string, data: BytesLike) {
  const { fragment: f, key } = functionOf(json);
  const bytes = getBytes(data);
  if (hexlify(bytes.slice(0, 4)) !== key) throw new TypeError(`data signature does not match function ${f.name}.`);
  return decode(f.inputs, bytes.slice(4));
}

function decodeErrorResult(json: string, data: BytesLike) {
  const { fragment: f, key } = fragmentOf(ErrorFragment, json);
  const bytes = getBytes(data);
  if (hexlify(bytes.slice(0, 4)) !== key) throw new TypeError(`data signature does not match error ${f.name}.`);
  return decode(f.inputs, bytes.slice(4));
}

function decodeEventLog(json: string, data: BytesLike, topics?: string[]) {
  const f = fragmentOf(EventFragment, json).fragment;
  // What Interface.decodeEventLog decodes: the indexed values from the topics (dynamic ones as their
  // hash), the others from the data, loosely.
  const indexed = f.inputs.filter((p) => p.indexed).map((p) => (p.type === "string" || p.type === "bytes" || p.isTuple() || p.isArray() ? ParamType.from("bytes32") : p));
  let topicData: Uint8Array | null = null;
  try {
    if (topics != null) topicData = getBytes(concat(f.anonymous ? topics : topics.slice(1)));
  } catch {
    // topics ethers refuses before it decodes
  }
  if (topicData) checkDecode(indexed, topicData, false);
  checkDecode(f.inputs.filter((p) => !p.indexed), getBytes(data), true);
  const values = new Interface([f]).decodeEventLog(f, data, topics);
  return new V5Result(f.inputs.map((p, i) => toV5(p, values[i])), f.inputs.map((p) => p.name || null));
}

/** The ABI operations of the v5 surface, by the name the guest calls them. */
export const ABI_OPS: Record<string, (...args: any[]) => unknown> = {
  abiDecode5: (types: (string | object)[], data: BytesLike, loose?: boolean) => decode(types.map((t) => ParamType.from(t)), data, loose === true),
  abiParse5: parseAbi,
  fragmentsFormat5: (jsons: string[], format: Format) => jsons.map((json) => fragmentFrom(json).format(format)),
  paramParse5: (param: string | object) => paramData(ParamType.from(param)),
  paramFormat5: (param: object, format: Format) => ParamType.from(param).format(format),
  signature5: (kind: "function" | "event" | "error", text: string) => fragmentFrom(`${kind} ${text}`).format("sighash"),
  encodeFunctionData5: (json: string, values: unknown[]) => {
    const { fragment: f, key } = functionOf(json);
    return concat([key, coder.encode(f.inputs, values)]);
  },
  decodeFunctionData5: decodeFunctionData,
  encodeFunctionResult5: (json: string, values: unknown[]) => coder.encode(functionOf(json).fragment.outputs, values),
  decodeFunctionResult5: decodeFunctionResult,
  encodeDeploy5: (json: string | null, values: unknown[]) => coder.encode(json ? fragmentFrom(json).inputs : [], values),
  encodeErrorResult5: (json: string, values: unknown[]) => {
    const { fragment: f, key } = fragmentOf(ErrorFragment, json);
    return concat([key, coder.encode(f.inputs, values)]);
  },
  decodeErrorResult5: decodeErrorResult,
  encodeFilterTopics5: (json: string, values: unknown[]) => {
    const f = fragmentOf(EventFragment, json).fragment;
    return new Interface([f]).encodeFilterTopics(f, values);
  },
  encodeEventLog5: (json: string, values: unknown[]) => {
    const f = fragmentOf(EventFragment, json).fragment;
    return new Interface([f]).encodeEventLog(f, values);
  },
  decodeEventLog5: decodeEventLog,
};
