import { ethers, network } from "hardhat";
import { Contract, type ContractTransactionResponse, type InterfaceAbi } from "ethers";
import Safe, { type ContractNetworksConfig } from "@safe-global/protocol-kit";

/**
 * A real Safe multisig on the Hardhat network: the Safe 1.5.0 contracts deployed from the
 * `@safe-global/safe-smart-account` build artifacts, driven through `@safe-global/protocol-kit`.
 */

const SAFE_VERSION = "1.5.0";
const ARTIFACTS = "@safe-global/safe-smart-account/build/artifacts/contracts";

/** Each protocol-kit `contractNetworks` field and the artifact deployed for it. */
const CONTRACTS = {
  safeSingleton: "SafeL2.sol/SafeL2",
  safeProxyFactory: "proxies/SafeProxyFactory.sol/SafeProxyFactory",
  multiSend: "libraries/MultiSend.sol/MultiSend",
  multiSendCallOnly: "libraries/MultiSendCallOnly.sol/MultiSendCallOnly",
  fallbackHandler: "handler/CompatibilityFallbackHandler.sol/CompatibilityFallbackHandler",
  signMessageLib: "libraries/SignMessageLib.sol/SignMessageLib",
  createCall: "libraries/CreateCall.sol/CreateCall",
  simulateTxAccessor: "accessors/SimulateTxAccessor.sol/SimulateTxAccessor",
} as const;

type Artifact = { abi: InterfaceAbi; bytecode: string };
const artifact = (name: keyof typeof CONTRACTS): Artifact => require(`${ARTIFACTS}/${CONTRACTS[name]}.json`);

/** One call the Safe makes; several are batched through MultiSend by protocol-kit. */
export type SafeCall = { to: string; data: string; value?: bigint };
export type SafeTransaction = Awaited<ReturnType<Safe["createTransaction"]>>;

/** The deployed Safe contracts, with the protocol-kit operations the tests need. */
export class SafeKit {
  constructor(readonly contractNetworks: ContractNetworksConfig) {}

  /** A protocol-kit instance for `safeAddress` acting as `signer` (an unlocked Hardhat account). */
  connect(safeAddress: string, signer: string): Promise<Safe> {
    return Safe.init({ provider: network.provider, signer, safeAddress, contractNetworks: this.contractNetworks });
  }

  /**
   * Deploys a Safe with `owners` and `threshold` (sent by the first owner); returns its address.
   * `setup` makes the Safe's setup delegatecall `to` with `data` (what a malicious deployer could use).
   */
  async createSafe(owners: string[], threshold: number, saltNonce = "0", setup?: { to: string; data: string }): Promise<string> {
    const kit = await Safe.init({
      provider: network.provider,
      signer: owners[0],
      contractNetworks: this.contractNetworks,
      predictedSafe: {
        safeAccountConfig: { owners, threshold, ...setup },
        safeDeploymentConfig: { saltNonce, safeVersion: SAFE_VERSION },
      },
    });
    const deployment = await kit.createSafeDeploymentTransaction();
    const deployer = await ethers.getSigner(owners[0]);
    await (await deployer.sendTransaction({ ...deployment, value: BigInt(deployment.value) })).wait();
    return kit.getAddress();
  }

  /** Builds the Safe transaction for `calls` and has each of `signers` sign it (EIP-712), in turn. */
  async sign(safeAddress: string, calls: SafeCall[], signers: string[]): Promise<SafeTransaction> {
    const transactions = calls.map(({ to, data, value = 0n }) => ({ to, data, value: value.toString() }));
    let safeTx = await (await this.connect(safeAddress, signers[0])).createTransaction({ transactions });
    for (const signer of signers) safeTx = await (await this.connect(safeAddress, signer)).signTransaction(safeTx);
    return safeTx;
  }

  /**
   * Executes through protocol-kit, sent by `executor` (by default its first signer, so no owner's
   * approval is added on top of the signatures gathered). Rejects when signatures are missing.
   */
  async execute(safeAddress: string, safeTx: SafeTransaction, executor = [...safeTx.signatures.values()][0].signer) {
    const kit = await this.connect(safeAddress, executor);
    const result = await kit.executeTransaction(safeTx);
    const receipt = await ethers.provider.getTransactionReceipt(result.hash);
    if (receipt?.status !== 1) throw new Error(`Safe transaction ${result.hash} was not mined successfully`);
    return result;
  }

  /** Sends `execTransaction` straight to the Safe with the signatures as they are: no client checks. */
  async execTransactionOnChain(safeAddress: string, safeTx: SafeTransaction, executor: string): Promise<ContractTransactionResponse> {
    const { to, value, data, operation, safeTxGas, baseGas, gasPrice, gasToken, refundReceiver } = safeTx.data;
    const safe = new Contract(safeAddress, artifact("safeSingleton").abi, await ethers.getSigner(executor));
    return safe.getFunction("execTransaction")(
      to, value, data, operation, safeTxGas, baseGas, gasPrice, gasToken, refundReceiver, safeTx.encodedSignatures(),
    );
  }

  /** Creates a transaction for `calls`, signs it with each of `signers` and executes it. */
  async proposeSignExecute(safeAddress: string, calls: SafeCall[], signers: string[]) {
    return this.execute(safeAddress, await this.sign(safeAddress, calls, signers));
  }
}

/** Deploys the Safe 1.5.0 singleton, factory and libraries from their artifacts (signer 0 pays). */
export async function deploySafeInfrastructure(): Promise<SafeKit> {
  const [deployer] = await ethers.getSigners();
  const config: Record<string, string> = {};
  for (const name of Object.keys(CONTRACTS) as (keyof typeof CONTRACTS)[]) {
    const { abi, bytecode } = artifact(name);
    const contract = await new ethers.ContractFactory(abi, bytecode, deployer).deploy();
    config[`${name}Address`] = await contract.getAddress();
  }
  const { chainId } = await ethers.provider.getNetwork();
  return new SafeKit({ [chainId.toString()]: config });
}

/** protocol-kit's TYPED_DATA_V4 signing method (the enum lives in a transitive package). */
const TYPED_DATA_V4 = "eth_signTypedData_v4" as never;

/** The Safe's ERC-1271 signature of EIP-712 `typedData`: each of `signers` (owners) signs it, in turn; the encoded signatures. */
export async function safeSignTypedData(kit: SafeKit, safeAddress: string, typedData: unknown, signers: string[]): Promise<string> {
  let message = (await kit.connect(safeAddress, signers[0])).createMessage(typedData as never);
  for (const owner of signers) message = await (await kit.connect(safeAddress, owner)).signMessage(message, TYPED_DATA_V4);
  return message.encodedSignatures();
}
