/**
 * What the guest `ethers` shim (guest/ethers.js) calls: synchronous pure functions backed by the
 * real ethers v6, run in the sandbox process (they hold no secret and ask the relayer nothing).
 * Inputs and outputs are tagged JSON text (tagged-json.ts), so no object of this process ever
 * reaches the QuickJS heap. Keys used here are only those the action
 * passes in (which it got from the relayer through a host call). What a call may cost this process
 * (outside QuickJS's memory limit) is bounded by ethers-bounds.ts before ethers runs, and its answer
 * by the run's memory after.
 */
import * as ethers from "ethers";
import type { TransactionLike, TypedDataField } from "ethers";
import { limitMessage, SandboxLimitError } from "../errors";
import type { RunLimits } from "../types";
import { checkArgs, checkArgsText } from "./ethers-bounds";
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
  const tx = ethers.Transaction.from(like);
  tx.signature = wallet.signingKey.sign(tx.unsignedHash);
  return tx.serialized;
}

function typedDataHash(domain: ethers.TypedDataDomain, types: Record<string, TypedDataField[]>, value: Record<string, unknown>) {
  const { EIP712Domain: _ignored, ...rest } = types; // v5-style code often passes it; ethers derives it
  return ethers.TypedDataEncoder.hash(domain, rest, value);
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
  randomBytes: (n: number) => ethers.randomBytes(Math.min(Number(n), 1024)),
  parseEther: ethers.parseEther,
  formatEther: ethers.formatEther,
  parseUnits: ethers.parseUnits,
  formatUnits: ethers.formatUnits,
  solidityPacked: ethers.solidityPacked,
  solidityPackedKeccak256: ethers.solidityPackedKeccak256,
  recoverAddress: ethers.recoverAddress,
  abiEncode: (types: string[], values: unknown[]) => coder.encode(types, values),
  abiDecode: (types: string[], data: ethers.BytesLike) => coder.decode(types, data).toArray(true),
  walletInfo,
  randomPrivateKey: () => ethers.Wallet.createRandom().privateKey,
  signMessage: (pk: string, message: string | Uint8Array) => new ethers.Wallet(pk).signMessageSync(message),
  signTransaction,
  signTypedData: (pk: string, domain: ethers.TypedDataDomain, types: Record<string, TypedDataField[]>, value: Record<string, unknown>) =>
    new ethers.Wallet(pk).signingKey.sign(typedDataHash(domain, types, value)).serialized,
  verifyTypedData: (domain: ethers.TypedDataDomain, types: Record<string, TypedDataField[]>, value: Record<string, unknown>, sig: string) =>
    ethers.recoverAddress(typedDataHash(domain, types, value), sig),
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
};

function decodeArgs(json: string): unknown[] {
  const args = decodeTagged(json);
  if (!Array.isArray(args)) throw new TypeError("ethers shim: arguments must be an array");
  return args;
}

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
    checkArgs(name, args, limits);
    const json = encodeTagged(op(...args));
    if (json.length > limits.memoryBytes) throw new SandboxLimitError("memoryBytes", limitMessage("memoryBytes", limits));
    return json;
  } catch (err) {
    if (err instanceof SandboxLimitError) throw new SandboxLimitError(err.limit, `${label}: ${err.message}`);
    const e = err as { shortMessage?: string; message?: string };
    throw new Error(`${label}: ${e.shortMessage ?? e.message ?? String(err)}`);
  }
}
