import { Interface, type Provider } from "ethers";
import { SignedRequestError } from "./errors";
import { chainOutage } from "../../protocol/chainErrors";

/**
 * Bounds of an ERC-1271 `isValidSignature` eth_call (the contract is the caller's choice, so its
 * cost is too). Measured with Safe 1.5.0 through its fallback handler (bench/signatures.ts, gas of
 * the eth_call including its 21k base): 2-of-3 ~54k, 5-of-7 ~76k, 10-of-12 ~113k; the cap leaves
 * room for larger Safes and nested contract owners.
 */
export const DEFAULT_ERC1271 = { gasLimit: 300_000, timeoutMs: 2_000 };
export type Erc1271Bounds = { gasLimit: number; timeoutMs: number };

const ERC1271 = new Interface(["function isValidSignature(bytes32 hash, bytes signature) view returns (bytes4)"]);
const ERC1271_MAGIC = "0x1626ba7e";

/**
 * ERC-1271: whether the contract at `address` (none: false) accepts `signature` over `digest`. The
 * call has a gas cap and a timeout, so a contract that burns gas or an RPC that stalls costs us at
 * most that; a revert, a timeout or any answer but the magic value is "not valid". An RPC node that
 * fails (chainErrors.ts) is not a verdict on the signature: that error is thrown (503).
 */
export async function isValidContractSignature(provider: Provider, address: string, digest: string, signature: string, bounds: Erc1271Bounds): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<"timeout">((resolve) => (timer = setTimeout(() => resolve("timeout"), bounds.timeoutMs)));
  const call = async () => {
    if ((await provider.getCode(address)) === "0x") return false;
    const data = ERC1271.encodeFunctionData("isValidSignature", [digest, signature]);
    const answer = await provider.call({ to: address, data, gasLimit: BigInt(bounds.gasLimit) });
    return ERC1271.decodeFunctionResult("isValidSignature", answer)[0] === ERC1271_MAGIC;
  };
  try {
    const result = await Promise.race([
      call().catch((err: unknown) => {
        if (chainOutage(err)) throw err;
        return false;
      }),
      timeout,
    ]);
    if (result === "timeout") throw new SignedRequestError("invalid_signature", `the contract at ${address} did not answer isValidSignature within ${bounds.timeoutMs} ms`);
    return result;
  } finally {
    clearTimeout(timer);
  }
}
