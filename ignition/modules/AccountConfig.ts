import { buildModule } from "@nomicfoundation/hardhat-ignition/modules";

/**
 * Deploys AccountConfig, the permission contract, in its two halves: AccountConfigViews (every
 * read) and AccountConfig (the state and every write), whose fallback serves the reads at its own
 * address. `accountConfig` is that one address with the merged ABI, IAccountConfig.
 * Parameters:
 *  - owner: governance owner (a Safe in production); default account 0.
 *  - adminApiPayer: manages the payer set beside the owner; default account 0.
 *  - apiPayers: addresses that relay writes for managed accounts; default none (the admin API payer
 *    or the owner adds them later; `npm start` passes its payer pool here).
 */
const AccountConfigModule = buildModule("AccountConfigModule", (m) => {
  const owner = m.getParameter("owner", m.getAccount(0));
  const adminApiPayer = m.getParameter("adminApiPayer", m.getAccount(0));
  const apiPayers = m.getParameter<string[]>("apiPayers", []);
  const views = m.contract("AccountConfigViews", []);
  const deployed = m.contract("AccountConfig", [owner, adminApiPayer, apiPayers, views]);
  const accountConfig = m.contractAt("IAccountConfig", deployed, { id: "AccountConfigApi" });
  return { accountConfig, accountConfigViews: views };
});

export default AccountConfigModule;
