import { ethers } from "hardhat";
import { Wallet } from "ethers";
import { authorize, deployAccountConfig, flat, hashOf, perms } from "../test/helpers/accountConfig";
import { usageKeySeal } from "../protocol/usageKeySeal";
import { printWorstCaseGas } from "./gasLimits";

/** Reference gas per write of the public Chipotle contract (a diamond), from the foundation issue. */
const REFERENCE: Record<string, number> = {
  newAccount: 280_054,
  registerWalletDerivation: 196_510,
  addGroup: 197_217,
  addAction: 196_343,
  addActionToGroup: 107_745,
  addPkpToGroup: 107_866,
  "setUsageApiKey (execute on one group)": 303_302,
  removeUsageApiKey: 82_817,
};

type Row = { write: string; gas: bigint };

/**
 * Gas of each administrative write (relayed by an API payer for the account key, the managed path)
 * and of the execution check at 1 and at 1,000 groups, printed with the reference figures: the
 * check with its witness group (`canExecute`), and the search the relayer runs for a wildcard key
 * (`findExecutionGroup`, through the CID's and the PKP's group indexes).
 */
export async function benchGas(groupsForScale = 1000): Promise<{ rows: Row[]; check1: bigint; checkN: bigint; find1: bigint; findN: bigint }> {
  const { config, payer } = await deployAccountConfig();
  const c = config.connect(payer);
  const rows: Row[] = [];
  const measure = async (write: string, tx: Promise<{ wait: () => Promise<{ gasUsed: bigint } | null> }>) => {
    const receipt = await (await tx).wait();
    rows.push({ write, gas: receipt!.gasUsed });
  };

  const account = hashOf("bench-account-key");
  const admin = Wallet.createRandom().address;
  await measure("newAccount", c.newAccount(account, true, "bench account", "an account for the gas bench", admin));
  const pkp = Wallet.createRandom().address;
  await measure("registerWalletDerivation", c.registerWalletDerivation(account, pkp, 123456789n, "wallet", "a wallet"));
  await measure("addGroup", c.addGroup(account, "group", "a group", [], []));
  const cid = hashOf("QmBenchCid");
  await measure("addAction", c.addAction(account, "action", "an action", cid));
  await measure("addActionToGroup", c.addActionToGroup(account, 1, cid));
  await measure("addPkpToGroup", c.addPkpToGroup(account, 1, pkp));
  const usage = hashOf("bench-usage-key");
  await measure("authorizeUsageApiKey", c.authorizeUsageApiKey(account, usageKeySeal(usage)));
  await measure("setUsageApiKey (execute on one group)", c.setUsageApiKey(account, usage, 0, 0, "usage", "a usage key", ...flat(perms({ executeInGroups: [1] }))));
  await measure("removeUsageApiKey", c.removeUsageApiKey(account, usage));

  // The same writes relayed for a usage key holding the scope on group 1 (more scope reads).
  const scoped = hashOf("bench-scoped-key");
  const scopes = perms({ canCreateGroups: true, canCreatePkps: true, manageIpfsIdsInGroups: [1], addPkpToGroups: [1] });
  await authorize(c, account, scoped);
  await (await c.setUsageApiKey(account, scoped, 0, 0, "scoped", "", ...flat(scopes))).wait();
  const pkp2 = Wallet.createRandom().address;
  await measure("registerWalletDerivation [usage key]", c.registerWalletDerivation(scoped, pkp2, 987654321n, "wallet", "a wallet"));
  await measure("addGroup [usage key]", c.addGroup(scoped, "group", "a group", [], []));
  // A CID the account registered (addAction opens its group index, as for the account key's row above),
  // then one the account never named: its first listing anywhere also creates its index (~22 k gas).
  await (await c.addAction(account, "action 2", "", hashOf("QmBenchCid2"))).wait();
  await measure("addActionToGroup [usage key]", c.addActionToGroup(scoped, 1, hashOf("QmBenchCid2")));
  await measure("addActionToGroup [usage key], CID never named", c.addActionToGroup(scoped, 1, hashOf("QmBenchCid3")));
  await measure("addPkpToGroup [usage key]", c.addPkpToGroup(scoped, 1, pkp2));

  // Execution check: a usage key with execute on the last group, which lists the CID and the PKP.
  const checkAt = async (groups: number) => {
    const key = hashOf(`bench-check-key-${groups}`);
    const acct = hashOf(`bench-check-account-${groups}`);
    await (await c.newAccount(acct, true, "a", "", admin)).wait();
    const wallet = Wallet.createRandom().address;
    await (await c.registerWalletDerivation(acct, wallet, 42n, "w", "")).wait();
    for (let i = 1; i <= groups; i++) {
      await (await c.addGroup(acct, `g${i}`, "", [], [])).wait();
      if (i % 250 === 0) console.log(`  ... ${i}/${groups} groups created`);
    }
    await (await c.addPkpToGroup(acct, groups, wallet)).wait();
    await (await c.addActionToGroup(acct, groups, cid)).wait();
    await authorize(c, acct, key);
    await (await c.setUsageApiKey(acct, key, 0, 0, "k", "", ...flat(perms({ executeInGroups: [0] })))).wait();
    const [allowed, witness] = await config.findExecutionGroup(key, cid, wallet);
    if (!allowed || witness !== BigInt(groups)) throw new Error(`findExecutionGroup gave ${allowed}/${witness}`);
    if (!(await config.canExecute(key, cid, wallet, witness))) throw new Error("canExecute denied a permitted run");
    return [await config.canExecute.estimateGas(key, cid, wallet, witness), await config.findExecutionGroup.estimateGas(key, cid, wallet)];
  };
  const [check1, find1] = await checkAt(1);
  const [checkN, findN] = await checkAt(groupsForScale);
  return { rows, check1, checkN, find1, findN };
}

export async function printGasBench() {
  console.log("== AccountConfig gas (managed path: an API payer relays for the account key)");
  const { rows, check1, checkN, find1, findN } = await benchGas();
  let over = 0;
  for (const { write, gas } of rows) {
    const ref = REFERENCE[write.replace(" [usage key]", "")];
    const ok = ref === undefined || gas <= BigInt(ref);
    if (!ok) over++;
    console.log(`${write.padEnd(40)} ${gas.toString().padStart(8)}   reference ${ref ?? "-"}   ${ok ? "ok" : "OVER"}`);
  }
  const ratio = Number(checkN) / Number(check1);
  console.log(`canExecute (estimateGas, incl. 21000 base): 1 group ${check1}, 1000 groups ${checkN}, ratio ${ratio.toFixed(3)} (target <= 1.2) ${ratio <= 1.2 ? "ok" : "OVER"}`);
  const findRatio = Number(findN) / Number(find1);
  console.log(`findExecutionGroup, wildcard key (estimateGas): 1 group ${find1}, 1000 groups ${findN}, ratio ${findRatio.toFixed(3)} (target <= 1.2) ${findRatio <= 1.2 ? "ok" : "OVER"}`);
  const { chainId } = await ethers.provider.getNetwork();
  console.log(`(chain ${chainId}; writes over reference: ${over})`);
  await printWorstCaseGas();
}
