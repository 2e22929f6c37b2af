import { expect } from "chai";
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { Contract, getAddress, HDNodeWallet, JsonRpcProvider, keccak256, toUtf8Bytes, Wallet } from "ethers";
import { freePorts, portFreed, spawnStart, type VestaProcess } from "./helpers/startProcess";

const READY = "Press Ctrl-C to stop.";
/** Hardhat's default test mnemonic: its keys are public. */
const PUBLIC_MNEMONIC = "test test test test test test test test test test test junk";
const PUBLIC = new Set(Array.from({ length: 100 }, (_, i) => HDNodeWallet.fromPhrase(PUBLIC_MNEMONIC, undefined, `m/44'/60'/0'/0/${i}`).address));
const ROLES = [
  "function owner() view returns (address)",
  "function getAdminApiPayer() view returns (address)",
  "function getApiPayers() view returns (address[])",
  "function isApiPayer(address) view returns (bool)",
];

/**
 * `npm start`'s service accounts (the contracts' owner, the admin API payer, the API payers) are
 * keys of its data directory's own, never the local chain's public test accounts: an API payer acts
 * as the owner of every managed account, so an action signing with a public payer key took over any
 * account (review: "cross-account takeover in development").
 */
describe("npm start's service accounts are keys of its data directory, not public test keys", function () {
  this.timeout(420_000);
  const dirs: string[] = [];
  let vesta: VestaProcess | undefined;
  let ports: { chain: number; api: number; triggers: number };
  before(async () => {
    const [chain, api, triggers] = await freePorts(3);
    ports = { chain, api, triggers };
  });
  afterEach(async () => {
    await vesta?.stop("SIGKILL");
    vesta = undefined;
    for (const p of Object.values(ports)) await portFreed(p);
  });
  after(() => {
    for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
  });

  const newDir = () => {
    const d = fs.mkdtempSync(path.join(os.tmpdir(), "vesta-keys-"));
    dirs.push(d);
    return d;
  };
  const up = async (dataDir: string) => {
    vesta = spawnStart({ VESTA_CHAIN_PORT: String(ports.chain), VESTA_PORT: String(ports.api), TRIGGERS_PORT: String(ports.triggers), VESTA_DATA_DIR: dataDir, VESTA_PAYER_COUNT: "2" });
    return vesta.waitFor(READY, 240_000);
  };
  const down = async () => {
    expect(await vesta!.stop("SIGTERM")).to.equal(0);
    vesta = undefined;
    for (const p of Object.values(ports)) await portFreed(p);
  };
  const api = async (p: string, key?: string, body?: unknown) => {
    const res = await fetch(`http://127.0.0.1:${ports.api}/core/v1${p}`, {
      method: body === undefined ? "GET" : "POST",
      headers: { ...(key ? { "x-api-key": key } : {}), ...(body === undefined ? {} : { "content-type": "application/json" }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, body: await res.json().catch(() => null) };
  };
  /** Every role on chain, and that none of the node's own (public) accounts holds one. */
  const rolesOnChain = async (d: { accountConfig: string; appAuth: string }) => {
    const provider = new JsonRpcProvider(`http://127.0.0.1:${ports.chain}`, undefined, { staticNetwork: true });
    try {
      const ac = new Contract(d.accountConfig, ROLES, provider);
      const roles = { owner: await ac.owner(), admin: await ac.getAdminApiPayer(), payers: [...(await ac.getApiPayers())].sort(), appAuthOwner: await new Contract(d.appAuth, ROLES, provider).owner() };
      const nodeAccounts: string[] = await provider.send("eth_accounts", []);
      expect(nodeAccounts.length).to.be.greaterThan(0);
      for (const a of nodeAccounts.map((x) => getAddress(x))) {
        expect(PUBLIC.has(a), `the node signs for ${a}`).to.equal(true); // the funded genesis accounts: public test keys...
        expect([roles.owner, roles.admin, roles.appAuthOwner, ...roles.payers]).to.not.include(a); // ...holding no role
      }
      return roles;
    } finally {
      provider.destroy();
    }
  };
  const deploymentOf = (dataDir: string) => JSON.parse(fs.readFileSync(path.join(dataDir, "deployment.json"), "utf8"));

  it("a new data directory: random keys kept in chain/keys.json (0600), no role for a public account, an action with a public key takes over nothing, the same keys after a restart", async () => {
    const dataDir = newDir();
    const out = await up(dataDir);
    const d = deploymentOf(dataDir);
    for (const a of [d.owner, d.adminApiPayer, ...d.apiPayers]) expect(PUBLIC.has(a), `${a} is derived from Hardhat's test mnemonic`).to.equal(false);
    expect(out).to.contain(`owner / admin payer ${d.owner}`).and.to.contain(`API payers         ${d.apiPayers.join(", ")}`);
    const keysFile = path.join(dataDir, "chain", "keys.json");
    expect(fs.statSync(keysFile).mode & 0o777).to.equal(0o600);
    const keys = JSON.parse(fs.readFileSync(keysFile, "utf8"));
    expect(new Wallet(keys.owner).address).to.equal(d.owner);
    expect(keys.payers.map((k: string) => new Wallet(k).address)).to.deep.equal(d.apiPayers);
    expect(await rolesOnChain(d)).to.deep.equal({ owner: d.owner, admin: d.owner, payers: [...d.apiPayers].sort(), appAuthOwner: d.owner });

    // The review's takeover, with what everyone knows: Hardhat's account 1, the old API payer.
    const victim = (await api("/new_account", undefined, { account_name: "victim" })).body.api_key as string;
    const attacker = (await api("/new_account", undefined, { account_name: "attacker" })).body.api_key as string;
    const stolenKey = `stolen-${Wallet.createRandom().address}`;
    const code = `async function main({ contract, payerKey, victimHash, usageHash }) {
      const provider = new ethers.providers.JsonRpcProvider(await Lit.Actions.getRpcUrl({ chain: "local" }));
      const c = new ethers.Contract(contract, ["function authorizeUsageApiKey(uint256,bytes32)"], new ethers.Wallet(payerKey, provider));
      try {
        await (await c.authorizeUsageApiKey(victimHash, ethers.utils.keccak256(ethers.utils.defaultAbiCoder.encode(["uint256"], [usageHash])), { gasLimit: 200000 })).wait();
        return "authorized";
      } catch (e) { return e.code + ": " + e.message; }
    }`;
    const params = {
      contract: d.accountConfig,
      payerKey: HDNodeWallet.fromPhrase(PUBLIC_MNEMONIC, undefined, "m/44'/60'/0'/0/1").privateKey,
      victimHash: BigInt(keccak256(toUtf8Bytes(victim))).toString(),
      usageHash: BigInt(keccak256(toUtf8Bytes(stolenKey))).toString(),
    };
    const run = await api("/lit_action", attacker, { code, js_params: params });
    expect(run.body.response, JSON.stringify(run.body)).to.match(/reverted with custom error .NotApiPayer\(\W*0x70997970C51812dc3A010C7d01b50e0d17dc79C8/); // account 1 is no payer
    expect((await api("/get_current_api_key", stolenKey)).status).to.equal(401);

    await down();
    const again = await up(dataDir);
    expect(again).to.match(/replayed the chain journal: \d+ blocks/);
    expect(deploymentOf(dataDir)).to.deep.include({ owner: d.owner, apiPayers: d.apiPayers, accountConfig: d.accountConfig });
    expect(JSON.parse(fs.readFileSync(keysFile, "utf8"))).to.deep.equal(keys);
    expect((await api("/list_groups", victim)).status).to.equal(200);
    expect((await api("/create_wallet", victim)).status).to.equal(200); // a relayed write: the payers' keys sign
  });

  it("a data directory of an older npm start (public owner and payers): the roles move to keys of its own, with a warning; its accounts stay and work", async () => {
    const dataDir = newDir();
    const accountKey = `made-by-an-older-version-${Wallet.createRandom().address}`;
    const made = spawnSync(process.execPath, ["--require", "ts-node/register/transpile-only", "test/helpers/legacyDataDir.ts", dataDir, "2", accountKey], { encoding: "utf8", timeout: 180_000 });
    expect(made.status, made.stderr).to.equal(0);
    const old = JSON.parse(made.stdout.trim().split("\n").pop()!);
    expect(PUBLIC.has(old.owner) && old.apiPayers.every((p: string) => PUBLIC.has(p))).to.equal(true);

    const out = await up(dataDir);
    expect(out).to.contain(`WARNING: ${dataDir} was made by an older npm start: its contracts' owner ${old.owner}, admin API payer ${old.owner}, API payer ${old.apiPayers[0]}`);
    expect(out).to.contain("AccountConfig: ownership accepted by").and.to.contain("AppAuth: ownership accepted by");
    const d = deploymentOf(dataDir);
    expect(d).to.deep.include({ accountConfig: old.accountConfig, appAuth: old.appAuth });
    for (const a of [d.owner, d.adminApiPayer, ...d.apiPayers]) expect(PUBLIC.has(a), a).to.equal(false);
    expect(await rolesOnChain(d)).to.deep.equal({ owner: d.owner, admin: d.owner, payers: [...d.apiPayers].sort(), appAuthOwner: d.owner });
    expect(fs.statSync(path.join(dataDir, "chain", "keys.json")).mode & 0o777).to.equal(0o600);
    expect(await api("/account_exists", accountKey)).to.deep.equal({ status: 200, body: true });
    expect((await api("/create_wallet", accountKey)).status).to.equal(200);

    await down();
    const again = await up(dataDir);
    expect(again).to.not.contain("WARNING");
    expect(deploymentOf(dataDir)).to.deep.include({ owner: d.owner, apiPayers: d.apiPayers });
    expect(((await api("/list_wallets", accountKey)).body as unknown[]).length).to.equal(1);
  });
});
