import { buildModule } from "@nomicfoundation/hardhat-ignition/modules";
import AccountConfigModule from "./AccountConfig";
import AppAuthModule from "./AppAuth";

/** The whole on-chain part of Vesta: the permission contract and the app governance contract. */
const VestaModule = buildModule("VestaModule", (m) => {
  const { accountConfig } = m.useModule(AccountConfigModule);
  const { appAuth } = m.useModule(AppAuthModule);
  return { accountConfig, appAuth };
});

export default VestaModule;
