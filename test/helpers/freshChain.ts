import hre from "hardhat";
import { HDNodeWallet } from "ethers";
import type { HardhatNetworkConfig, HardhatRuntimeEnvironment } from "hardhat/types";
import { createProvider } from "hardhat/internal/core/providers/construction";
import { LazyInitializationProviderAdapter } from "hardhat/internal/core/providers/lazy-initialization";

/** An hre-shaped object with its own fresh in-process chain (what openDurableChain uses of hre); `over` changes its network's configuration. */
export function freshHre(over: Partial<HardhatNetworkConfig> = {}): HardhatRuntimeEnvironment {
  const base = hre.config.networks.hardhat;
  const net = { ...base, ...over, mining: { ...base.mining, ...over.mining } } as HardhatNetworkConfig;
  const config = { ...hre.config, networks: { ...hre.config.networks, hardhat: net } };
  const provider = new LazyInitializationProviderAdapter(() => createProvider(config, "hardhat", hre.artifacts));
  return { network: { name: "hardhat", config: net, provider } } as unknown as HardhatRuntimeEnvironment;
}

/** Account `i` of the in-process chain (its well-known test mnemonic). */
export function hardhatWallet(i: number): HDNodeWallet {
  const a = hre.config.networks.hardhat.accounts as { mnemonic: string; path: string };
  return HDNodeWallet.fromPhrase(a.mnemonic, undefined, `${a.path}/${i}`);
}
