/**
 * Makes a data directory as `npm start` made it before its keys were its own: the durable chain,
 * the contracts deployed with the local chain's account 0 as owner and admin API payer and accounts
 * 1..N as API payers (Hardhat's public test mnemonic), and deployment.json; then one managed
 * account, created by payer 1 as the relayer created them. Run as its own process (it takes over
 * hre's provider):
 *   node --require ts-node/register/transpile-only test/helpers/legacyDataDir.ts <dir> <payers> <account key>
 */
import fs from "node:fs";
import path from "node:path";
import hre from "hardhat";
import { Wallet } from "ethers";
import { openDurableChain } from "../../scripts/start/chain";
import { contractCodeHashes } from "../../scripts/start/dataDir";
import { deployVesta } from "../../scripts/lib/deploy";
import { devComposeHash } from "../../attestation/development";
import { keyHash, usageKeySeal } from "../../protocol/usageKeySeal";

async function main() {
  const [dir, count, accountKey] = process.argv.slice(2);
  const chain = await openDurableChain(hre, dir, () => undefined);
  try {
    const signers = await hre.ethers.getSigners();
    const owner = signers[0].address;
    const payers = signers.slice(1, 1 + Number(count)).map((s) => s.address);
    const deployment = await deployVesta(hre, { owner, adminApiPayer: owner, apiPayers: payers, composeHashes: [`0x${devComposeHash()}`] });
    await chain.provider.record({ k: "deployment", deployment, codeHashes: await contractCodeHashes(hre) });
    fs.writeFileSync(path.join(dir, "deployment.json"), JSON.stringify({ rpcUrl: "http://127.0.0.1:8545", ...deployment }, null, 2) + "\n");
    const ac = (await hre.ethers.getContractAt("IAccountConfig", deployment.accountConfig)).connect(signers[1]);
    const hash = keyHash(accountKey);
    await (await ac.authorizeUsageApiKey(hash, usageKeySeal(hash))).wait();
    await (await ac.newAccount(hash, true, "made before the keys were the data directory's own", "", Wallet.createRandom().address)).wait();
    console.log(JSON.stringify(deployment));
  } finally {
    await chain.close();
  }
}

// Only as its own process: `hardhat test` loads every file under test/, this one too.
if (require.main === module) {
  main().then(
    () => process.exit(0),
    (err) => {
      console.error(err);
      process.exit(1);
    },
  );
}
