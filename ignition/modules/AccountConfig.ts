import { buildModule } from "@nomicfoundation/hardhat-ignition/modules";

/**
 * Deploys AccountConfig, the permission contract.
 * Parameters:
 *  - owner: governance owner (a Safe in production); default account 0.
 *  - adminApiPayer: manages the payer set beside the owner; default account 0.
 *  - apiPayers: addresses that relay writes for managed accounts; default [account 1].
 */
const AccountConfigModule = buildModule("AccountConfigModule", (m) => {
  const owner = m.getParameter("owner", m.getAccount(0));
  const adminApiPayer = m.getParameter("adminApiPayer", m.getAccount(0));
  const apiPayers = m.getParameter("apiPayers", [m.getAccount(1)]);
  const accountConfig = m.contract("AccountConfig", [owner, adminApiPayer, apiPayers]);
  return { accountConfig };
});

export default AccountConfigModule;
