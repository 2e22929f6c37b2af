import type { JsonRpcProvider } from "ethers";
import { rpcProvider } from "../../protocol/rpc";
import type { IAccountConfig } from "../../typechain-types";
import { connectAccountConfig } from "../../protocol/accountConfig";

export type Chain = {
  provider: JsonRpcProvider;
  /** AccountConfig at its one address, with the merged ABI (its writes and, through its fallback, its reads). */
  accountConfig: IAccountConfig;
  chainId: bigint;
};

/** Connects to the RPC (each request bounded by `timeoutMs`) and checks that the AccountConfig contract is deployed there. */
export async function connectChain(rpcUrl: string, accountConfigAddress: string, timeoutMs = 15_000): Promise<Chain> {
  const provider = rpcProvider(rpcUrl, timeoutMs, { batchMaxCount: 1 });
  let chainId: bigint;
  try {
    chainId = (await provider.getNetwork()).chainId;
  } catch (err) {
    provider.destroy();
    throw new Error(`cannot reach the chain at ${rpcUrl}: ${(err as Error).message}`);
  }
  const code = await provider.getCode(accountConfigAddress);
  if (code === "0x") {
    provider.destroy();
    throw new Error(`no contract at ${accountConfigAddress} on chain ${chainId} (${rpcUrl}): deploy first (npm run deploy)`);
  }
  return { provider, accountConfig: connectAccountConfig(accountConfigAddress, provider), chainId };
}
