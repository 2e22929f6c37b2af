import { buildModule } from "@nomicfoundation/hardhat-ignition/modules";
import { ZeroAddress } from "ethers";

/**
 * Deploys AppAuth, the dstack app governance contract (TEE image allow-list).
 *
 * Parameters:
 * - `owner`: the owner, a Safe multisig in production (default: account 0).
 * - `appId`: the app id to accept; the zero address (default) means the contract's own address,
 *   which is what dstack uses as app id.
 * - `initialComposeHashes`: compose hashes allowed from the start (default: none).
 * - `allowAnyDevice`: whether instances may boot on any TEE device (default: true).
 */
const AppAuthModule = buildModule("AppAuthModule", (m) => {
  const owner = m.getParameter("owner", m.getAccount(0));
  const appId = m.getParameter("appId", ZeroAddress);
  const initialComposeHashes = m.getParameter<string[]>("initialComposeHashes", []);
  const allowAnyDevice = m.getParameter("allowAnyDevice", true);

  const appAuth = m.contract("AppAuth", [owner, appId, initialComposeHashes, allowAnyDevice]);

  return { appAuth };
});

export default AppAuthModule;
