import type { HardhatRuntimeEnvironment } from "hardhat/types";
import VestaModule from "../../ignition/modules/Vesta";

export type DeployOptions = {
  /** Governance owner of both contracts (a Safe in production). */
  owner: string;
  /** Manages the API payer set beside the owner. */
  adminApiPayer: string;
  /** Wallets that relay writes for managed accounts. */
  apiPayers: string[];
  /** Compose hashes allowed from the start (0x-prefixed bytes32). */
  composeHashes?: string[];
};

export type Deployment = {
  chainId: number;
  accountConfig: string;
  appAuth: string;
  owner: string;
  adminApiPayer: string;
  apiPayers: string[];
  deployedAtBlock: number;
};

/** Deploys AccountConfig and AppAuth through the Vesta Ignition module on `hre`'s network. */
export async function deployVesta(hre: HardhatRuntimeEnvironment, opts: DeployOptions): Promise<Deployment> {
  const { accountConfig, appAuth } = await hre.ignition.deploy(VestaModule, {
    parameters: {
      AccountConfigModule: { owner: opts.owner, adminApiPayer: opts.adminApiPayer, apiPayers: opts.apiPayers },
      AppAuthModule: { owner: opts.owner, initialComposeHashes: opts.composeHashes ?? [] },
    },
  });
  const chainId = Number((await hre.ethers.provider.getNetwork()).chainId);
  return {
    chainId,
    accountConfig: await accountConfig.getAddress(),
    appAuth: await appAuth.getAddress(),
    owner: opts.owner,
    adminApiPayer: opts.adminApiPayer,
    apiPayers: opts.apiPayers,
    deployedAtBlock: await hre.ethers.provider.getBlockNumber(),
  };
}
