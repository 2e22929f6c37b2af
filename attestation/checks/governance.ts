import { Contract, getAddress, type Provider } from "ethers";
import { attempt, docJson, fail, pass, skip, type Evidence } from "../evidence";
import { bareHex, InfoDoc, PATHS, type CheckResult } from "../types";

/** The one function of the app governance contract (IAppAuthPolicy) the verifier calls. */
const APP_AUTH_ABI = ["function allowedComposeHashes(bytes32 composeHash) view returns (bool)"];

/** The governance contract named by `/info`: `0x` followed by the app id. */
function contractOf(ev: Evidence): string {
  const appId = bareHex(docJson(ev, PATHS.info, InfoDoc).app_id);
  if (!/^[0-9a-f]{40}$/.test(appId)) throw new Error(`app_id ${JSON.stringify(appId)} is not an address without 0x (40 hex)`);
  return getAddress(`0x${appId}`);
}

/**
 * Governance: the app id is a contract on the chain, and that contract allows the compose hash.
 * Skipped without a chain to ask.
 */
export async function governanceChecks(ev: Evidence, provider: Provider | undefined): Promise<CheckResult[]> {
  const noChain = "no chain to ask: give --rpc-url <url> (or VESTA_VERIFY_RPC_URL)";
  const chain = async () => `chain ${(await provider!.getNetwork()).chainId}`;
  return [
    await attempt("governance.app-contract", async () => {
      if (!provider) return skip(noChain);
      const address = contractOf(ev);
      if ((await provider.getCode(address)) === "0x") return fail(`no contract at 0x + app_id = ${address} on ${await chain()}`);
      return pass(`0x + app_id = ${address} is a contract on ${await chain()}`);
    }),
    await attempt("governance.compose-hash-allowed", async () => {
      if (!provider) return skip(noChain);
      const address = contractOf(ev);
      const hash = `0x${bareHex(docJson(ev, PATHS.info, InfoDoc).compose_hash)}`;
      const allowed: boolean = await new Contract(address, APP_AUTH_ABI, provider).allowedComposeHashes(hash);
      return allowed
        ? pass(`allowedComposeHashes(${hash.slice(0, 18)}…) is true on ${address}`)
        : fail(`allowedComposeHashes(${hash}) is false on ${address}: the compose hash is not whitelisted (propose it through the owner Safe)`);
    }),
  ];
}
