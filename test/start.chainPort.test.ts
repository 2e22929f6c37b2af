import { expect } from "chai";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import hre from "hardhat";
import { Contract, HDNodeWallet, Transaction } from "ethers";
import { freePorts, portFreed, spawnStart, type VestaProcess } from "./helpers/startProcess";
import { BURNER, BURNS_EITHER_WAY, creation, LEAST_LIMIT, NEEDS_978K } from "./helpers/gasContracts";

const READY = "Press Ctrl-C to stop.";
const EXTENSION = "chrome-extension://nkbihfbeogaeaoehlefnkodbefgpgknn";
const ATTACKER = "0xa77ac4e5a77ac4e5a77ac4e5a77ac4e5a77ac4e5";
/** Hardhat's test account 7: its key is public (a wallet's own key in this test). */
const PUBLIC_7 = HDNodeWallet.fromPhrase("test test test test test test test test test test test junk", undefined, "m/44'/60'/0'/0/7");

/** AccountConfig's `_owner` slot, from the compiler's storage layout. */
async function ownerSlot(): Promise<number> {
  const name = "contracts/AccountConfig.sol:AccountConfig";
  const [file, contract] = name.split(":");
  const info = await hre.artifacts.getBuildInfo(name);
  const layout = (info!.output.contracts[file][contract] as unknown as { storageLayout: { storage: Array<{ label: string; slot: string }> } }).storageLayout;
  return Number(layout.storage.find((s) => s.label === "_owner")!.slot);
}

/** The memory the process `pid` uses: resident, less what its allocator freed lazily (reclaimable at once). */
function usedMb(pid: number): number {
  const t = fs.readFileSync(`/proc/${pid}/smaps_rollup`, "utf8");
  const kb = (k: string) => Number(new RegExp(`^${k}:\\s+(\\d+)`, "m").exec(t)?.[1] ?? 0);
  return (kb("Rss") - kb("LazyFree")) / 1024;
}

/**
 * What reaches `npm start`'s chain through its JSON-RPC port (review: any web page rewrote the
 * contracts with a cross-origin text/plain POST of hardhat_setStorageAt, answered with
 * `Access-Control-Allow-Origin: *`; an action's eth_estimateGas, capped at 1M gas, ran the node's
 * search up to its 60M block gas limit in one request: 3.2 s and +1 GB each).
 */
describe("npm start's JSON-RPC port: a web page edits nothing, wallets and actions still work, an estimate is bounded", function () {
  this.timeout(420_000);
  let vesta: VestaProcess;
  let dataDir: string;
  let ports: { chain: number; api: number; triggers: number };
  let deployment: { accountConfig: string; owner: string };
  let apiKey: string;
  let rpcUrl: string;

  const post = (body: unknown, headers: Record<string, string> = { "content-type": "application/json" }) =>
    fetch(rpcUrl, { method: "POST", headers, body: JSON.stringify(body) });
  const rpc = async (method: string, params: unknown[] = [], headers?: Record<string, string>) => {
    const j = (await (await post({ jsonrpc: "2.0", id: 1, method, params }, headers)).json()) as { result?: any; error?: { code: number; message: string } };
    if (j.error) throw Object.assign(new Error(j.error.message), { code: j.error.code });
    return j.result;
  };
  const ownerOf = async (contract: string) => new Contract(contract, ["function owner() view returns (address)"]).interface.decodeFunctionResult("owner", await rpc("eth_call", [{ to: contract, data: "0x8da5cb5b" }, "latest"]))[0] as string;
  const deploy = async (runtime: string) => {
    const [from] = await rpc("eth_accounts");
    const hash = await rpc("eth_sendTransaction", [{ from, data: creation(runtime) }]);
    return (await rpc("eth_getTransactionReceipt", [hash])).contractAddress as string;
  };
  const runAction = async (code: string, js_params: unknown) => {
    const res = await fetch(`http://127.0.0.1:${ports.api}/core/v1/lit_action`, { method: "POST", headers: { "content-type": "application/json", "x-api-key": apiKey }, body: JSON.stringify({ code, js_params }) });
    return (await res.json()) as { response: any; has_error: boolean };
  };

  before(async () => {
    const [chain, api, triggers] = await freePorts(3);
    ports = { chain, api, triggers };
    rpcUrl = `http://127.0.0.1:${chain}`;
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "vesta-port-"));
    vesta = spawnStart({ VESTA_CHAIN_PORT: String(chain), VESTA_PORT: String(api), TRIGGERS_PORT: String(triggers), VESTA_DATA_DIR: dataDir, VESTA_PAYER_COUNT: "2" });
    const out = await vesta.waitFor(READY, 240_000);
    apiKey = /A first account key to try \(shown once\):\s+(\S+)/.exec(out)![1];
    deployment = JSON.parse(fs.readFileSync(path.join(dataDir, "deployment.json"), "utf8"));
  });
  after(async () => {
    expect(await vesta?.stop("SIGTERM")).to.equal(0);
    for (const p of Object.values(ports ?? {})) await portFreed(p);
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it("the review's takeover: a web page's cross-origin text/plain POST of hardhat_setStorageAt is refused (no CORS grant) and AccountConfig's owner stays; no state edit passes from a program either", async () => {
    const ac = deployment.accountConfig;
    const owner = deployment.owner;
    expect(await ownerOf(ac)).to.equal(owner);
    const slot = await ownerSlot();
    expect(await rpc("eth_getStorageAt", [ac, `0x${slot.toString(16)}`, "latest"])).to.equal(`0x${owner.slice(2).toLowerCase().padStart(64, "0")}`);
    const code = await rpc("eth_getCode", [ac, "latest"]);
    const journal = path.join(dataDir, "chain", "journal");
    const journalBytes = fs.statSync(journal).size;

    const takeover = { jsonrpc: "2.0", id: 1, method: "hardhat_setStorageAt", params: [ac, `0x${slot.toString(16)}`, `0x${ATTACKER.slice(2).padStart(64, "0")}`] };
    const res = await post(takeover, { origin: "https://evil.example", "content-type": "text/plain" });
    const answer = await res.text();
    expect(await ownerOf(ac), `AccountConfig's owner after the page's request (answered ${answer})`).to.equal(owner);
    expect(res.headers.get("access-control-allow-origin"), "a CORS grant to the page").to.equal(null);
    expect(answer).to.not.contain('"result"');
    expect(res.status).to.equal(403);
    // The same edits from a program (no origin, JSON): refused as methods.
    for (const [method, params] of [
      ["hardhat_setStorageAt", takeover.params],
      ["hardhat_setCode", [ac, "0x00"]],
      ["hardhat_impersonateAccount", [owner]],
      ["hardhat_setBalance", [ATTACKER, "0xde0b6b3a7640000"]],
      ["evm_mine", []],
    ] as Array<[string, unknown[]]>) {
      const err = await rpc(method, params).then(() => undefined, (e: Error & { code: number }) => e);
      expect(err?.code, method).to.equal(-32601);
    }
    await expect(rpc("eth_sendTransaction", [{ from: owner, to: ac, data: "0xf2fde38b" + ATTACKER.slice(2).padStart(64, "0") }])).to.be.rejected; // the node holds no key of the owner
    expect(await ownerOf(ac)).to.equal(owner);
    expect(await rpc("eth_getCode", [ac, "latest"])).to.equal(code);
    expect(await rpc("eth_getBalance", [ATTACKER, "latest"])).to.equal("0x0");
    expect(fs.statSync(journal).size, "journal bytes").to.equal(journalBytes);
  });

  it("a wallet extension's JSON requests work, with CORS for its origin only; so does an action's fetch of the RPC URL whatever content type it names", async () => {
    const json = { origin: EXTENSION, "content-type": "application/json" };
    const res = await post({ jsonrpc: "2.0", id: 7, method: "eth_chainId", params: [] }, json);
    expect(await res.json()).to.deep.equal({ jsonrpc: "2.0", id: 7, result: "0x7a69" });
    expect(res.headers.get("access-control-allow-origin")).to.equal(EXTENSION);
    const nonce = Number(await rpc("eth_getTransactionCount", [PUBLIC_7.address, "pending"], json));
    const raw = await PUBLIC_7.signTransaction(Transaction.from({ type: 2, chainId: 31337, nonce, to: ATTACKER.replace("a77a", "b0b0"), value: 1n, gasLimit: 21_000, maxFeePerGas: 10_000_000_000n, maxPriorityFeePerGas: 1_000_000_000n }));
    const hash = await rpc("eth_sendRawTransaction", [raw], json);
    expect((await rpc("eth_getTransactionReceipt", [hash], json)).status).to.equal("0x1");

    const run = await runAction(`async function main() {
      const url = await Lit.Actions.getRpcUrl({ chain: "local" });
      const r = await fetch(url, { method: "POST", headers: { "content-type": "text/plain" }, body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_chainId", params: [] }) });
      return (await r.json()).result;
    }`, {});
    expect(run.response, JSON.stringify(run)).to.equal("0x7a69");
  });

  it("an action's eth_estimateGas searches within the gas cap: it answers where the node's own search failed, and an estimate that burns its gas costs the chain about what calls do", async () => {
    const needs = await deploy(NEEDS_978K);
    const estimate = `async function main({ to, n, method }) {
      const url = await Lit.Actions.getRpcUrl({ chain: "local" });
      const t0 = Date.now();
      const answers = await Promise.all(Array.from({ length: n }, (_, i) => fetch(url, { method: "POST", headers: { "content-type": "application/json" },
        body: JSON.stringify({ jsonrpc: "2.0", id: i, method, params: method === "eth_call" ? [{ to }, "latest"] : [{ to }] }) }).then((r) => r.json())));
      return { ms: Date.now() - t0, answers: answers.map((a) => a.result || a.error.message) };
    }`;
    // Succeeds from a limit of 999,002 (within the 1M cap): the node searched up to 60M and failed past Osaka's 16.7M transaction cap.
    const one = await runAction(estimate, { to: needs, n: 1, method: "eth_estimateGas" });
    expect(BigInt(one.response.answers[0]), JSON.stringify(one)).to.be.within(BigInt(LEAST_LIMIT), BigInt(LEAST_LIMIT) + 1_000n);

    // Every run of its search burns the limit it tries: as many estimates as calls burning 1M each, side by side.
    const [burner, burns] = [await deploy(BURNER), await deploy(BURNS_EITHER_WAY)];
    const measure = async (to: string, method: string, n: number) => {
      const pid = vesta.child.pid!;
      const base = usedMb(pid);
      let peak = base;
      const timer = setInterval(() => (peak = Math.max(peak, usedMb(pid))), 20);
      try {
        const r = await runAction(estimate, { to, n, method });
        expect(r.has_error, JSON.stringify(r)).to.equal(false);
        return { ms: r.response.ms as number, grewMb: peak - base, answers: r.response.answers as string[] };
      } finally {
        clearInterval(timer);
      }
    };
    const calls = await measure(burner, "eth_call", 4);
    const estimates = await measure(burns, "eth_estimateGas", 4);
    console.log(`      4 calls burning 1M gas: ${calls.ms} ms, the chain +${calls.grewMb.toFixed(0)} MB at most; 4 estimates that burn every run: ${estimates.ms} ms, +${estimates.grewMb.toFixed(0)} MB`);
    for (const a of estimates.answers) expect(BigInt(a)).to.be.within(BigInt(LEAST_LIMIT), 1_000_000n);
    expect(estimates.grewMb).to.be.below(Math.max(4 * calls.grewMb, 1_000)); // the node's own search: 17 s and +2.2 GB for these 4
  });
});
