import { buildModule } from "@nomicfoundation/hardhat-ignition/modules";

/**
 * Deploys AccountConfig, the permission contract.
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
  const accountConfig = m.contract("AccountConfig", [owner, adminApiPayer, apiPayers]);
  return { accountConfig };
});

export default AccountConfigModule;
