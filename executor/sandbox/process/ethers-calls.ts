/**
 * What the guest `ethers` shim (guest/ethers.js, and the v5 surface guest/ethers5-*.js) calls:
 * synchronous pure functions backed by the real ethers v6, run in the sandbox process (they hold no
 * secret and ask the relayer nothing; the v5 ABI operations answer v5's shapes: ethers5-abi.ts).
 * Inputs and outputs are tagged JSON text (tagged-json.ts), so no object of this process ever
 * reaches the QuickJS heap. Keys used here are only those the action
 * passes in (which it got from the relayer through a host call). What a call may cost this process
 * (outside QuickJS's memory limit and the run's deadline) is bounded by ethers-bounds.ts before ethers
 * runs (its decodes by checkDecode within the call, withinCall), and its answer by the run's memory
 * after. encodeRlp is this file's own: ethers' is quadratic.
 */
import * as ethers from "ethers";
import type { TransactionLike, TypedDataField } from "ethers";
import { limitMessage, SandboxLimitError } from "../errors";
import type { RunLimits } from "../types";
import { ABI_OPS, checkedDecode, clearAbiCache } from "./ethers5-abi";
import { checkArgsText, checkEthersCall, shimBytes, withinCall } from "./ethers-bounds";
import { decodeTagged, encodeTagged } from "./tagged-json";

type Op = (...args: any[]) => unknown;

const coder = ethers.AbiCoder.defaultAbiCoder();

function walletInfo(privateKey: string) {
  const wallet = new ethers.Wallet(privateKey);
  const { publicKey, compressedPublicKey } = wallet.signingKey;
  return { privateKey: wallet.privateKey, address: wallet.address, publicKey, compressedPublicKey };
}

/** What ethers' Wallet.signTransaction does, without the (async) provider/ENS resolution. */
function signTransaction(privateKey: string, input: Record<string, unknown>): string {
  const wallet = new ethers.Wallet(privateKey);
  const { from, gas, type, ...fields } = input;
  if (from != null && ethers.getAddress(String(from)) !== wallet.address) {
    throw new Error(`signTransaction: from ${String(from)} is not the wallet's address ${wallet.address}`);
  }
  const like: TransactionLike = { ...fields, gasLimit: (fields.gasLimit ?? gas) as TransactionLike["gasLimit"] };
  if (type != null) like.type = Number(type);
  // Untyped, without EIP-1559 fees or an access list: legacy, as ethers v5 signs it (v6 would choose EIP-2930).
  else if (like.maxFeePerGas == null && like.maxPriorityFeePerGas == null && like.accessList == null) like.type = 0;
  const tx = ethers.Transaction.from(like);
  tx.signature = wallet.signingKey.sign(tx.unsignedHash);
  return tx.serialized;
}

/** Typed data's types without EIP712Domain: v5-style code often passes it; ethers derives it. */
function structTypes(types: Record<string, TypedDataField[]>) {
  const { EIP712Domain: _ignored, ...rest } = types;
  return rest;
}

const typedDataHash = (domain: ethers.TypedDataDomain, types: Record<string, TypedDataField[]>, value: Record<string, unknown>) => ethers.TypedDataEncoder.hash(domain, structTypes(types), value);

/**
 * ethers' encodeRlp, in one pass: the same bytes (RLP, Ethereum yellow paper appendix B) and the
 * same errors (each leaf read by getBytes), without its cost (it builds each list by concatenating
 * arrays of numbers, a byte each: 2,000 items of 32 bytes take a second, a 1 MB leaf 80 MB).
 */
function encodeRlp(object: unknown): string {
  const sizes = new Map<unknown[], number>(); // each list's payload
  const leaves = new Map<unknown, Uint8Array>();
  const lengthBytes = (length: number) => {
    let n = 0;
    for (let v = length; v > 0; v = Math.floor(v / 256)) n++;
    return n;
  };
  const head = (length: number) => (length <= 55 ? 1 : 1 + lengthBytes(length));
  const itemSize = (item: unknown): number => {
    if (Array.isArray(item)) {
      let payload = 0;
      for (const child of item) payload += itemSize(child);
      sizes.set(item, payload);
      return head(payload) + payload;
    }
    const bytes = ethers.getBytes(item as ethers.BytesLike, "object");
    leaves.set(item, bytes);
    return bytes.length === 1 && bytes[0] <= 0x7f ? 1 : head(bytes.length) + bytes.length;
  };
  const out = new Uint8Array(itemSize(object));
  let at = 0;
  const writeHead = (length: number, short: number, long: number) => {
    if (length <= 55) return void (out[at++] = short + length);
    const n = head(length) - 1;
    out[at++] = long + n;
    for (let i = n - 1; i >= 0; i--) out[at++] = Math.floor(length / 256 ** i) % 256;
  };
  const write = (item: unknown): void => {
    if (Array.isArray(item)) {
      writeHead(sizes.get(item)!, 0xc0, 0xf7);
      for (const child of item) write(child);
      return;
    }
    const bytes = leaves.get(item)!;
    if (!(bytes.length === 1 && bytes[0] <= 0x7f)) writeHead(bytes.length, 0x80, 0xb7);
    out.set(bytes, at);
    at += bytes.length;
  };
  write(object);
  return "0x" + Buffer.from(out.buffer, out.byteOffset, out.byteLength).toString("hex");
}

/** At most 65,536 random bytes a call, as crypto.getRandomValues (a silently shorter answer would be a weak key). */
function randomBytes(n: unknown): Uint8Array {
  if (typeof n !== "number" || !Number.isInteger(n) || n < 0 || n > 65_536) throw new RangeError(`randomBytes: the length must be an integer from 0 to 65536, got ${String(n)}`);
  return ethers.randomBytes(n);
}

const OPS: Record<string, Op> = {
  keccak256: ethers.keccak256,
  sha256: ethers.sha256,
  id: ethers.id,
  toUtf8Bytes: (s: string) => ethers.toUtf8Bytes(s),
  toUtf8String: (b: ethers.BytesLike) => ethers.toUtf8String(b),
  hexlify: ethers.hexlify,
  getBytes: (b: ethers.BytesLike) => ethers.getBytes(b),
  hashMessage: ethers.hashMessage,
  verifyMessage: ethers.verifyMessage,
  computeAddress: ethers.computeAddress,
  getAddress: ethers.getAddress,
  isAddress: ethers.isAddress,
  isHexString: ethers.isHexString,
  dataLength: ethers.dataLength,
  zeroPadValue: ethers.zeroPadValue,
  concat: ethers.concat,
  toBeHex: ethers.toBeHex,
  randomBytes,
  parseEther: ethers.parseEther,
  formatEther: ethers.formatEther,
  parseUnits: ethers.parseUnits,
  formatUnits: ethers.formatUnits,
  solidityPacked: ethers.solidityPacked,
  solidityPackedKeccak256: ethers.solidityPackedKeccak256,
  recoverAddress: ethers.recoverAddress,
  abiEncode: (types: string[], values: unknown[]) => coder.encode(types, values),
  abiDecode: (types: string[], data: ethers.BytesLike) => checkedDecode(types.map((t) => ethers.ParamType.from(t)), data).toArray(true),
  walletInfo,
  randomPrivateKey: () => ethers.Wallet.createRandom().privateKey,
  signMessage: (pk: string, message: string | Uint8Array) => new ethers.Wallet(pk).signMessageSync(message),
  signTransaction,
  signTypedData: (pk: string, domain: ethers.TypedDataDomain, types: Record<string, TypedDataField[]>, value: Record<string, unknown>) =>
    new ethers.Wallet(pk).signingKey.sign(typedDataHash(domain, types, value)).serialized,
  verifyTypedData: (domain: ethers.TypedDataDomain, types: Record<string, TypedDataField[]>, value: Record<string, unknown>, sig: string) =>
    ethers.recoverAddress(typedDataHash(domain, types, value), sig),
  // v6 functions the v5 surface (guest/ethers5-*.js) also stands on
  sha512: ethers.sha512,
  ripemd160: ethers.ripemd160,
  computeHmac: (algorithm: "sha256" | "sha512", key: ethers.BytesLike, data: ethers.BytesLike) => ethers.computeHmac(algorithm, key, data),
  namehash: ethers.namehash,
  dnsEncode: (name: string) => ethers.dnsEncode(name),
  isValidName: ethers.isValidName,
  encodeBytes32String: ethers.encodeBytes32String,
  decodeBytes32String: ethers.decodeBytes32String,
  encodeRlp,
  decodeRlp: ethers.decodeRlp,
  encodeBase64: ethers.encodeBase64,
  decodeBase64: ethers.decodeBase64,
  getCreateAddress: (tx: { from: string; nonce: bigint }) => ethers.getCreateAddress(tx),
  getCreate2Address: ethers.getCreate2Address,
  getIcapAddress: ethers.getIcapAddress,
  solidityPackedSha256: ethers.solidityPackedSha256,
  toUtf8CodePoints: (s: string, form?: ethers.UnicodeNormalizationForm) => ethers.toUtf8CodePoints(s, form),
  toUtf8StringWith: (b: ethers.BytesLike, onError: string) => ethers.toUtf8String(b, ethers.Utf8ErrorFuncs[onError as keyof typeof ethers.Utf8ErrorFuncs]),
  computePublicKey: (key: ethers.BytesLike, compressed?: boolean) => ethers.SigningKey.computePublicKey(key, compressed === true),
  recoverPublicKey: (digest: ethers.BytesLike, sig: string) => ethers.SigningKey.recoverPublicKey(digest, sig),
  signDigest: (pk: string, digest: ethers.BytesLike) => new ethers.SigningKey(pk).sign(digest).serialized,
  // v5 answers the x coordinate of the shared point (v6 the whole point)
  computeSharedSecret: (pk: string, other: ethers.BytesLike) => ethers.dataSlice(new ethers.SigningKey(pk).computeSharedSecret(other), 1, 33),
  // v5's zeroPad and hexZeroPad run in QuickJS; a length past 64 KB is first asked of the bounds here (ethers-bounds.ts), so
  // the run is marked with the memory limit as for zeroPadValue, rather than meeting QuickJS's out-of-memory.
  zeroPad: () => null,
  hexZeroPad: () => null,
  typedDataHash,
  typedDataHashDomain: (domain: ethers.TypedDataDomain) => ethers.TypedDataEncoder.hashDomain(domain),
  typedDataHashStruct: (name: string, types: Record<string, TypedDataField[]>, value: Record<string, unknown>) => ethers.TypedDataEncoder.hashStruct(name, types, value),
  typedDataPrimaryType: (types: Record<string, TypedDataField[]>) => ethers.TypedDataEncoder.getPrimaryType(types),
  typedDataEncode: (domain: ethers.TypedDataDomain, types: Record<string, TypedDataField[]>, value: Record<string, unknown>) => ethers.TypedDataEncoder.encode(domain, structTypes(types), value),
  typedDataPayload: (domain: ethers.TypedDataDomain, types: Record<string, TypedDataField[]>, value: Record<string, unknown>) => ethers.TypedDataEncoder.getPayload(domain, structTypes(types), value),
  ...ABI_OPS,
};

/** How the action wrote the operations that are not plain ethers functions, for error messages. */
const LABELS: Record<string, string> = {
  walletInfo: "new ethers.Wallet",
  randomPrivateKey: "ethers.Wallet.createRandom",
  signMessage: "wallet.signMessage",
  signTransaction: "wallet.signTransaction",
  signTypedData: "wallet.signTypedData",
  abiEncode: "abiCoder.encode",
  abiDecode: "abiCoder.decode",
  abiDecode5: "abiCoder.decode",
  abiParse5: "new Interface",
  fragmentsFormat5: "fragment.format",
  paramParse5: "ParamType.from",
  paramFormat5: "paramType.format",
  signature5: "interface.getFunction",
  toUtf8StringWith: "ethers.utils.toUtf8String",
  zeroPad: "ethers.utils.zeroPad",
  hexZeroPad: "ethers.utils.hexZeroPad",
  typedDataHash: "_TypedDataEncoder.hash",
  typedDataHashDomain: "_TypedDataEncoder.hashDomain",
  typedDataHashStruct: "_TypedDataEncoder.hashStruct",
  typedDataPrimaryType: "_TypedDataEncoder.getPrimaryType",
  typedDataEncode: "_TypedDataEncoder.encode",
  typedDataPayload: "_TypedDataEncoder.getPayload",
  signDigest: "signingKey.signDigest",
  computeSharedSecret: "signingKey.computeSharedSecret",
};
/** The v5 Interface operations are labelled as the action wrote them: interface.encodeFunctionData, ... */
for (const name of Object.keys(OPS)) if (/^(en|de)code.*5$/.test(name)) LABELS[name] ??= `interface.${name.slice(0, -1)}`;

function decodeArgs(json: string): unknown[] {
  const args = decodeTagged(json);
  if (!Array.isArray(args)) throw new TypeError("ethers shim: arguments must be an array");
  return args;
}

/** Forgets what the helpers cached for the last run (parsed ABI fragments): called as each run starts. */
export const clearEthersCaches = clearAbiCache;

/**
 * Runs one shim operation: `name` from the guest, `argsJson` the tagged JSON array of arguments.
 * Throws SandboxLimitError("memoryBytes") for a call past what the run may handle (see
 * ethers-bounds.ts), an Error naming the operation otherwise.
 */
export function callEthers(name: string, argsJson: string, limits: RunLimits): string {
  const op = Object.prototype.hasOwnProperty.call(OPS, name) ? OPS[name] : undefined;
  if (!op) throw new TypeError(`ethers shim: ${name} is not supported in the sandbox`);
  const label = LABELS[name] ?? `ethers.${name}`;
  try {
    checkArgsText(argsJson, limits);
    const args = decodeArgs(argsJson);
    const used = checkEthersCall(name, args, limits);
    const json = encodeTagged(withinCall(limits, shimBytes(limits) - used, () => op(...args)));
    if (json.length > limits.memoryBytes) throw new SandboxLimitError("memoryBytes", limitMessage("memoryBytes", limits));
    return json;
  } catch (err) {
    if (err instanceof SandboxLimitError) throw new SandboxLimitError(err.limit, `${label}: ${err.message}`);
    // ethers' error code (INVALID_ARGUMENT, ...) rides at the end of the message: the guest sets it as the error's `code`, as ethers does.
    const e = err as { shortMessage?: string; message?: string; code?: unknown };
    const code = typeof e.code === "string" && /^[A-Z_]{1,40}$/.test(e.code) ? ` (code=${e.code})` : "";
    const Kind = err instanceof RangeError ? RangeError : err instanceof TypeError ? TypeError : Error;
    throw new Kind(`${label}: ${e.shortMessage ?? e.message ?? String(err)}${code}`);
  }
}
