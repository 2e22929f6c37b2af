import fs from "node:fs";
import { BrowserProvider, getAddress, isHexString, JsonRpcProvider, type Eip1193Provider, type Provider } from "ethers";
import Safe, { EthSafeSignature, type ContractNetworksConfig } from "@safe-global/protocol-kit";
import type { SafeTransaction } from "@safe-global/types-kit";
import { AppAuth__factory } from "../../typechain-types";

/**
 * Whitelisting a compose hash on AppAuth through the Safe that owns it, in three steps that may run
 * on different machines: propose (writes the Safe transaction to a JSON file), sign (each owner adds
 * an EIP-712 signature to the file) and execute (anyone submits it once the threshold is reached).
 */

/** How to reach the chain and who acts: an RPC URL or EIP-1193 provider; a private key or an unlocked address. */
export type Connection = { provider: string | Eip1193Provider; signer?: string; contractNetworks?: ContractNetworksConfig };

/** The file passed between the steps. Signers check it against the chain before they sign. */
export type Proposal = {
  chainId: string;
  safe: string;
  appAuth: string;
  composeHash: string;
  safeTxHash: string;
  tx: { to: string; value: string; data: string; operation: number; safeTxGas: string; baseGas: string; gasPrice: string; gasToken: string; refundReceiver: string; nonce: number };
  /** Owner address → signature (hex). */
  signatures: Record<string, string>;
};

const appAuthInterface = AppAuth__factory.createInterface();

const ethersProvider = (c: Connection): Provider =>
  typeof c.provider === "string" ? new JsonRpcProvider(c.provider, undefined, { staticNetwork: true }) : new BrowserProvider(c.provider);

const connect = (c: Connection, safeAddress: string) =>
  Safe.init({ provider: c.provider, signer: c.signer, safeAddress, contractNetworks: c.contractNetworks });

/** Rebuilds the proposal's Safe transaction and checks it is the one the file says it is. */
async function rebuild(kit: Safe, p: Proposal): Promise<SafeTransaction> {
  const { to, value, data, operation, ...options } = p.tx;
  const safeTx = await kit.createTransaction({ transactions: [{ to, value, data, operation }], options });
  const expectedData = appAuthInterface.encodeFunctionData("addComposeHash", [p.composeHash]);
  if (getAddress(to) !== getAddress(p.appAuth) || data !== expectedData) throw new Error("the proposal's transaction is not addComposeHash(composeHash) on appAuth");
  if ((await kit.getTransactionHash(safeTx)) !== p.safeTxHash) throw new Error("the proposal file was altered: its Safe transaction hash does not match");
  return safeTx;
}

/** Step 1: the Safe transaction `addComposeHash(composeHash)` on AppAuth, for the Safe that owns it. */
export async function proposeComposeHash(c: Connection, opts: { appAuth: string; composeHash: string }): Promise<Proposal> {
  if (!isHexString(opts.composeHash, 32)) throw new Error(`compose hash ${opts.composeHash} is not 0x + 64 hex`);
  const provider = ethersProvider(c);
  try {
    const appAuth = AppAuth__factory.connect(getAddress(opts.appAuth), provider);
    const safe = await appAuth.owner();
    if (await appAuth.allowedComposeHashes(opts.composeHash)) throw new Error(`${opts.composeHash} is already allowed on ${opts.appAuth}`);
    const kit = await connect(c, safe);
    const data = appAuthInterface.encodeFunctionData("addComposeHash", [opts.composeHash]);
    const safeTx = await kit.createTransaction({ transactions: [{ to: await appAuth.getAddress(), value: "0", data }] });
    const { to, value, operation, safeTxGas, baseGas, gasPrice, gasToken, refundReceiver, nonce } = safeTx.data;
    return {
      chainId: (await kit.getChainId()).toString(),
      safe,
      appAuth: await appAuth.getAddress(),
      composeHash: opts.composeHash.toLowerCase(),
      safeTxHash: await kit.getTransactionHash(safeTx),
      tx: { to, value, data, operation, safeTxGas, baseGas, gasPrice, gasToken, refundReceiver, nonce: Number(nonce) },
      signatures: {},
    };
  } finally {
    provider.destroy();
  }
}

/** Step 2: the connection's signer, an owner of the Safe, signs the proposal (EIP-712); returns it with the signature. */
export async function signProposal(c: Connection, p: Proposal): Promise<Proposal> {
  const kit = await connect(c, p.safe);
  const owner = getAddress((await kit.getSafeProvider().getSignerAddress()) ?? "");
  if (!(await kit.isOwner(owner))) throw new Error(`${owner} is not an owner of the Safe ${p.safe}`);
  const signed = await kit.signTransaction(await rebuild(kit, p));
  const signature = signed.getSignature(owner);
  if (!signature) throw new Error(`protocol-kit returned no signature for ${owner}`);
  return { ...p, signatures: { ...p.signatures, [owner]: signature.data } };
}

/** Step 3: submits the proposal with its signatures (refused below the Safe's threshold); resolves once mined. */
export async function executeProposal(c: Connection, p: Proposal): Promise<string> {
  const kit = await connect(c, p.safe);
  const safeTx = await rebuild(kit, p);
  for (const [owner, data] of Object.entries(p.signatures)) safeTx.addSignature(new EthSafeSignature(owner, data));
  const threshold = await kit.getThreshold();
  const signers = Object.keys(p.signatures).length;
  if (signers < threshold) throw new Error(`${signers} of the ${threshold} owner signatures the Safe needs`);
  const { hash } = await kit.executeTransaction(safeTx);
  const provider = ethersProvider(c);
  try {
    const receipt = await provider.waitForTransaction(hash);
    if (receipt?.status !== 1) throw new Error(`the Safe transaction ${hash} failed on chain`);
    return hash;
  } finally {
    provider.destroy();
  }
}

export const readProposal = (file: string): Proposal => JSON.parse(fs.readFileSync(file, "utf8"));
export const writeProposal = (file: string, p: Proposal) => fs.writeFileSync(file, JSON.stringify(p, null, 2) + "\n");
