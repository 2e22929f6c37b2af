import fs from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { expect } from "chai";
import { ethers } from "hardhat";
import { keccak256, toUtf8Bytes, Transaction, Wallet, type BaseWallet } from "ethers";
import { RPC_METHODS, rpcRequest } from "../executor/sandbox/host/rpc-urls";
import { currentRpcGuard, DEFAULT_RPC_GAS_CAP, installRpcGuard } from "../executor/sandbox/host/rpc-guard";
import { rpcTurns } from "../executor/sandbox/host/rpc-slots";
import { loadConfig } from "../relayer/config";
import { call, chainKeys, newAccount, startStack, type Stack } from "./helpers/relayer";

const rpc = (method: string, params: unknown[] = [], id: unknown = 1) => JSON.stringify({ jsonrpc: "2.0", id, method, params });
const sent = (r: { body: string } | { refused: string }) => {
  if ("refused" in r) throw new Error(`refused: ${r.refused}`);
  return JSON.parse(r.body);
};
const refusal = (r: { body: string } | { refused: string }) => ("refused" in r ? r.refused : `SENT ${r.body}`);

/** A loop that burns all the gas it is given (JUMPDEST PUSH1 0 JUMP), as creation code. */
const BURN = "0x5b600056";

describe("actions' requests to the deployment's RPC URLs: exact methods, capped gas, never the service's own accounts", function () {
  this.timeout(180_000);
  const payer = new Wallet(chainKeys(1, 1)[0]);
  const stranger = Wallet.createRandom();
  const guard = { gasCap: 1_000_000, serviceAccounts: new Set([payer.address]) };

  describe("the methods: exactly those ethers v5 sends, spelled exactly", function () {
    it("refuses look-alikes, other eth_ methods and node-side state that a prefix filter let through", () => {
      const names = [
        "eth_sendTransaction\n", "eth_sendTransaction ", "eth_sendTransaction\u0000", "eth_s\u0130gn", "eth_\u212Aaccounts", "Eth_Call", "ETH_CHAINID", "eth_chainId ",
        "eth_signTransaction", "eth_sendUnsignedTransaction", "eth_fillTransaction", "eth_newFilter", "eth_newBlockFilter", "eth_newPendingTransactionFilter",
        "eth_getFilterChanges", "eth_uninstallFilter", "eth_subscribe", "eth_pendingTransactions", "eth_createAccessList", "eth_simulateV1", "eth_callMany",
        "eth_coinbase", "eth_mining", "eth_submitWork", "web3_clientVersion", "web3_sha3", "net_listening", "txpool_content", "hardhat_mine", "debug_traceCall",
      ];
      for (const name of names) {
        expect(refusal(rpcRequest("POST", rpc(name, [{}]), guard)), JSON.stringify(name)).to.match(/^the JSON-RPC method ".*" may not be sent to the deployment's RPC URL/);
      }
    });

    it("allows each method the guest's ethers v5 provider sends, and no other", () => {
      const shim = fs.readFileSync(path.join(__dirname, "..", "executor", "sandbox", "guest", "ethers5-providers.js"), "utf8");
      const used = new Set([...shim.matchAll(/"((?:eth|net|web3)_[A-Za-z]+)"/g)].map((m) => m[1]));
      expect([...used].sort()).to.deep.equal([...RPC_METHODS].sort());
    });

    it("writes the request again with jsonrpc, id, method and params only; refuses other shapes", () => {
      expect(sent(rpcRequest("POST", '{"jsonrpc":"2.0","id":7,"method":"eth_chainId","params":[],"x":{"method":"eth_sendTransaction"},"__proto__":{"method":"eth_sign"}}', guard))).to.deep.equal({ jsonrpc: "2.0", id: 7, method: "eth_chainId", params: [] });
      expect(sent(rpcRequest("POST", '{"method":"eth_chainId"}', guard))).to.deep.equal({ jsonrpc: "2.0", id: null, method: "eth_chainId", params: [] });
      expect(sent(rpcRequest("POST", rpc("eth_chainId", [], "a-string-id"), guard)).id).to.equal("a-string-id");
      for (const [body, why] of [
        ['"eth_chainId"', /a JSON object/],
        [rpc("eth_chainId", [], { nested: 1 }), /id must be a number, a string/],
        [rpc("eth_chainId", [], "x".repeat(200)), /id must be a number, a string of at most 128/],
        ['{"jsonrpc":"1.0","id":1,"method":"eth_chainId","params":[]}', /JSON-RPC 2\.0/],
        ['{"jsonrpc":"2.0","id":1,"method":"eth_getBalance","params":{"address":"0x00"}}', /params must be an array/],
        [rpc("eth_chainId") + rpc("eth_sendTransaction"), /the body is not JSON/],
        ["\uFEFF" + rpc("eth_chainId"), /the body is not JSON/],
      ] as const) {
        expect(refusal(rpcRequest("POST", body, guard)), body.slice(0, 60)).to.match(why);
      }
    });
  });

  describe("gas: a call executes at most the cap", function () {
    for (const method of ["eth_call", "eth_estimateGas"]) {
      it(`${method}: no gas is the cap, more is the cap, less is kept; v5's gasLimit counts as gas; other fields and shapes are refused`, () => {
        const to = stranger.address;
        const gasOf = (tx: Record<string, unknown>) => sent(rpcRequest("POST", rpc(method, [tx, "latest"]), guard)).params[0].gas;
        expect(gasOf({ to, data: BURN })).to.equal("0xf4240");
        expect(gasOf({ to, gas: "0x1c9c380" })).to.equal("0xf4240");
        expect(gasOf({ to, gasLimit: "0x1c9c380" })).to.equal("0xf4240");
        expect(gasOf({ to, gas: "0x5208" })).to.equal("0x5208");
        expect(sent(rpcRequest("POST", rpc(method, [{ to, gasLimit: "0x5208" }, "latest"]), guard)).params[0]).to.deep.equal({ to, gas: "0x5208" });
        expect(sent(rpcRequest("POST", rpc(method, [{ to }, "0x10"]), guard)).params[1]).to.equal("0x10");
        for (const [params, why] of [
          [[], /first parameter must be a transaction object/],
          [["0x00"], /first parameter must be a transaction object/],
          [[{ to }, "latest", { [to]: { code: BURN } }], /takes a transaction and a block only .* \(no state or block overrides\)/],
          [[{ to, gas: "lots" }], /gas must be a quantity/],
          [[{ to, gas: -1 }], /gas must be a quantity/],
          [[{ to, gasCap: "0x1" }], /a field the deployment's RPC URL does not take: "gasCap"/],
          [[JSON.parse('{"__proto__":{"gas":"0x1"}}')], /a field the deployment's RPC URL does not take: "__proto__"/],
        ] as const) {
          expect(refusal(rpcRequest("POST", rpc(method, params as unknown as unknown[]), guard)), JSON.stringify(params)).to.match(why);
        }
      });
    }

    it("VESTA_ACTION_RPC_GAS_CAP sets the cap (default 1,000,000), checked at boot", () => {
      const env = { VESTA_MODE: "development", VESTA_RPC_URL: "http://127.0.0.1:8545", VESTA_ACCOUNT_CONFIG_ADDRESS: stranger.address, VESTA_PAYER_KEYS: payer.privateKey, VESTA_SANDBOX_NETWORK: "shared" };
      expect(loadConfig(env).actionRpcGasCap).to.equal(DEFAULT_RPC_GAS_CAP).and.to.equal(1_000_000);
      expect(loadConfig({ ...env, VESTA_ACTION_RPC_GAS_CAP: "5000000" }).actionRpcGasCap).to.equal(5_000_000);
      expect(() => loadConfig({ ...env, VESTA_ACTION_RPC_GAS_CAP: "20000" })).to.throw(/VESTA_ACTION_RPC_GAS_CAP must be at least 21000/);
    });
  });

  describe("eth_sendRawTransaction: a transaction the action signed, not the service's, within the cap", function () {
    const tx = (over: Record<string, unknown> = {}) => Transaction.from({ type: 2, chainId: 31337, nonce: 0, to: stranger.address, value: 1, gasLimit: 21_000, maxFeePerGas: 10n ** 10n, maxPriorityFeePerGas: 10n ** 9n, ...over });
    const send = async (signer: BaseWallet, over: Record<string, unknown> = {}) => rpcRequest("POST", rpc("eth_sendRawTransaction", [await signer.signTransaction(tx(over))]), guard);

    it("sends a stranger's transaction as it was signed", async () => {
      const raw = await stranger.signTransaction(tx());
      expect(sent(rpcRequest("POST", rpc("eth_sendRawTransaction", [raw]), guard)).params).to.deep.equal([raw]);
    });

    it("refuses a transaction from one of the service's accounts, and one carrying an EIP-7702 authorization one of them signed", async () => {
      expect(refusal(await send(payer))).to.equal(`a transaction from ${payer.address} may not be sent to the deployment's RPC URL: it is one of this service's own accounts (an API payer, the admin API payer or the contracts' owner)`);
      const auth = await payer.authorize({ address: stranger.address, nonce: 0, chainId: 31337 });
      expect(refusal(await send(stranger, { type: 4, authorizationList: [auth] }))).to.match(new RegExp(`authorization \\(EIP-7702\\) signed by ${payer.address} may not be sent`));
      const own = await stranger.authorize({ address: stranger.address, nonce: 1, chainId: 31337 });
      expect(refusal(await send(stranger, { type: 4, authorizationList: [own] }))).to.match(/^SENT /);
    });

    it("refuses a gas limit above the cap, an unsigned transaction and what is not one", async () => {
      expect(refusal(await send(stranger, { gasLimit: 1_000_001 }))).to.match(/gas limit may be at most 1000000 on the deployment's RPC URL \(this one: 1000001; VESTA_ACTION_RPC_GAS_CAP\)/);
      expect(refusal(rpcRequest("POST", rpc("eth_sendRawTransaction", [tx().unsignedSerialized]), guard))).to.match(/takes a signed transaction/);
      for (const params of [[], ["0x1234"], [42], ["0x02", "0x02"]]) {
        expect(refusal(rpcRequest("POST", rpc("eth_sendRawTransaction", params), guard)), JSON.stringify(params)).to.match(/takes one signed transaction/);
      }
    });

    it("the process's guard is the strictest installed: the smallest cap, every relayer's accounts, until each is removed", () => {
      const before = currentRpcGuard();
      const a = installRpcGuard({ gasCap: 3_000_000, serviceAccounts: () => [payer.address] });
      const b = installRpcGuard({ gasCap: 2_000_000, serviceAccounts: () => [stranger.address.toLowerCase()] });
      try {
        const g = currentRpcGuard();
        expect(g.gasCap).to.be.at.most(2_000_000);
        expect([...g.serviceAccounts]).to.include.members([payer.address, stranger.address]);
        b();
        expect(currentRpcGuard().gasCap).to.be.at.most(3_000_000);
      } finally {
        a();
        b();
      }
      expect(currentRpcGuard()).to.deep.equal(before);
    });
  });

  it("a run's turns: at most two under way, the others wait in order, a waiter whose run ended never runs", async () => {
    const turn = rpcTurns(2);
    let now = 0;
    let most = 0;
    const order: number[] = [];
    const job = (i: number) => async () => {
      most = Math.max(most, ++now);
      await new Promise((r) => setTimeout(r, 20));
      order.push(i);
      now--;
      return i;
    };
    expect(await Promise.all([1, 2, 3, 4, 5].map((i) => turn(job(i))))).to.deep.equal([1, 2, 3, 4, 5]);
    expect([most, order]).to.deep.equal([2, [1, 2, 3, 4, 5]]);
    const ended = new AbortController();
    const slow = [turn(job(6)), turn(job(7))];
    const waiter = turn(job(8), ended.signal);
    ended.abort();
    await expect(waiter).to.be.rejectedWith("fetch: the run has ended");
    await Promise.all(slow);
    expect(order).to.not.include(8);
  });

  describe("through the relayer, as under npm start (the local chain given to actions; no private fetches)", function () {
    let stack: Stack;
    before(async () => {
      stack = await startStack({ env: { VESTA_ACTION_FETCH_PRIVATE: "false" } });
    });
    after(async () => stack?.stop());

    it("an action holding an API payer's key cannot make itself a usage key of another account (the takeover of the review)", async () => {
      const victim = await newAccount(stack, "victim");
      const attacker = await newAccount(stack, "attacker");
      const cfg = (await call(stack, "GET", "/get_node_chain_config")).body;
      const stolenKey = `stolen-${Wallet.createRandom().address}`;
      const usageHash = BigInt(keccak256(toUtf8Bytes(stolenKey)));
      const code = `async function main({ contract, payerKey, usageHash }) {
        const provider = new ethers.providers.JsonRpcProvider(await Lit.Actions.getRpcUrl({ chain: "local" }));
        const iface = new ethers.utils.Interface(["event AccountCreated(uint256 indexed apiKeyHash, address indexed adminWalletAddress, bool managed, string name, string description)"]);
        const logs = await provider.getLogs({ address: contract, fromBlock: 0, toBlock: "latest", topics: [iface.getEventTopic("AccountCreated")] });
        const victimHash = logs.map((l) => iface.parseLog(l)).filter((e) => e.args.name === "victim").pop().args.apiKeyHash.toString();
        const c = new ethers.Contract(contract, ["function authorizeUsageApiKey(uint256,bytes32)"], new ethers.Wallet(payerKey, provider));
        try {
          await (await c.authorizeUsageApiKey(victimHash, ethers.utils.keccak256(ethers.utils.defaultAbiCoder.encode(["uint256"], [usageHash])), { gasLimit: 200000 })).wait();
          return "sent";
        } catch (e) {
          return e.serverError || e.message;
        }
      }`;
      const nonce = await ethers.provider.getTransactionCount(payer.address);
      const r = await call(stack, "POST", "/lit_action", { key: attacker.apiKey, body: { code, js_params: { contract: cfg.contract_address, payerKey: payer.privateKey, usageHash: usageHash.toString() } } });
      expect(r.status, JSON.stringify(r.body)).to.equal(200);
      expect(r.body.response).to.equal(`fetch: a transaction from ${payer.address} may not be sent to the deployment's RPC URL: it is one of this service's own accounts (an API payer, the admin API payer or the contracts' owner)`);
      expect(await ethers.provider.getTransactionCount(payer.address)).to.equal(nonce);
      expect((await call(stack, "GET", "/get_current_api_key", { key: stolenKey })).status).to.equal(401);
      expect((await call(stack, "GET", "/list_groups", { key: victim.apiKey })).status).to.equal(200);
    });

    it("nor with the contracts' owner key (also the admin API payer): no payer added, no ETH moved", async () => {
      const attacker = await newAccount(stack, "attacker2");
      const cfg = (await call(stack, "GET", "/get_node_chain_config")).body;
      const owner = new Wallet(chainKeys(0, 1)[0]);
      const mine = Wallet.createRandom().address;
      const code = `async function main({ contract, ownerKey, mine }) {
        const provider = new ethers.providers.JsonRpcProvider(await Lit.Actions.getRpcUrl({ chain: "local" }));
        const owner = new ethers.Wallet(ownerKey, provider);
        const out = [];
        for (const send of [
          () => new ethers.Contract(contract, ["function addApiPayer(address)"], owner).addApiPayer(mine, { gasLimit: 200000 }),
          () => owner.sendTransaction({ to: mine, value: ethers.utils.parseEther("100") }),
        ]) {
          try { await (await send()).wait(); out.push("sent"); } catch (e) { out.push(e.serverError || e.message); }
        }
        return out;
      }`;
      const r = await call(stack, "POST", "/lit_action", { key: attacker.apiKey, body: { code, js_params: { contract: cfg.contract_address, ownerKey: owner.privateKey, mine } } });
      expect(r.body.response, JSON.stringify(r.body)).to.deep.equal([0, 1].map(() => `fetch: a transaction from ${owner.address} may not be sent to the deployment's RPC URL: it is one of this service's own accounts (an API payer, the admin API payer or the contracts' owner)`));
      expect(await stack.config.isApiPayer(mine)).to.equal(false);
      expect(await ethers.provider.getBalance(mine)).to.equal(0n);
    });

    it("gas-burning calls run at most the cap each: they end quickly and another account's writes go on meanwhile", async () => {
      const victim = await newAccount(stack, "victim3");
      const attacker = await newAccount(stack, "attacker3");
      const code = `async function main({ n }) {
        const url = await Lit.Actions.getRpcUrl({ chain: "local" });
        const t0 = Date.now();
        const answers = await Promise.all(Array.from({ length: n }, (_, i) => fetch(url, { method: "POST", headers: { "content-type": "application/json" },
          body: JSON.stringify({ jsonrpc: "2.0", id: i, method: i % 2 ? "eth_estimateGas" : "eth_call", params: [{ data: "${BURN}", ...(i < 2 ? {} : { gas: "0xf42400" }) }, "latest"] }) }).then((r) => r.json())));
        return { ms: Date.now() - t0, errors: answers.map((a) => a.error && a.error.message) };
      }`;
      const t0 = Date.now();
      const attack = call(stack, "POST", "/lit_action", { key: attacker.apiKey, body: { code, js_params: { n: 4 } } });
      await new Promise((r) => setTimeout(r, 300));
      const t1 = Date.now();
      const w = await call(stack, "GET", "/create_wallet", { key: victim.apiKey });
      const victimMs = Date.now() - t1;
      const r = await attack;
      console.log(`      4 gas-burning calls: ${r.body.response?.ms} ms in the action, the run ${Date.now() - t0} ms; another account's create_wallet meanwhile ${victimMs} ms`);
      expect(w.status).to.equal(200);
      expect(r.body.has_error, JSON.stringify(r.body)).to.equal(false);
      for (const e of r.body.response.errors) expect(e).to.match(/out of gas|gas required exceeds/i);
      expect(r.body.response.ms).to.be.below(8_000); // the node's default gas, or the 16M the action asked, was 5-15 s each
      expect(victimMs).to.be.below(5_000);
    });
  });

  describe("a run's requests under way at once, through the relayer", function () {
    let node: http.Server;
    let stack: Stack;
    const seen = { now: 0, most: 0, total: 0 };
    before(async () => {
      node = http.createServer(async (req, res) => {
        for await (const _ of req);
        seen.total++;
        seen.most = Math.max(seen.most, ++seen.now);
        setTimeout(() => {
          seen.now--;
          res.writeHead(200, { "content-type": "application/json" }).end('{"jsonrpc":"2.0","id":1,"result":"0x7a69"}');
        }, 150);
      });
      await new Promise<void>((resolve) => node.listen(0, "127.0.0.1", resolve));
      const url = `http://127.0.0.1:${(node.address() as AddressInfo).port}/`;
      stack = await startStack({ env: { VESTA_ACTION_FETCH_PRIVATE: "false", VESTA_ACTION_RPC_URLS: `slow=${url}` } });
    });
    after(async () => {
      await stack?.stop();
      node.closeAllConnections();
      await new Promise((r) => node.close(r));
    });

    it("ten requests fired at once reach the node two at a time, all answered", async () => {
      const { apiKey } = await newAccount(stack);
      const code = `async function main() {
        const url = await Lit.Actions.getRpcUrl({ chain: "slow" });
        const rs = await Promise.all(Array.from({ length: 10 }, (_, i) => fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ jsonrpc: "2.0", id: i, method: "eth_chainId", params: [] }) }).then((r) => r.json())));
        return rs.map((r) => r.result);
      }`;
      const r = await call(stack, "POST", "/lit_action", { key: apiKey, body: { code } });
      expect(r.body.response, JSON.stringify(r.body)).to.deep.equal(Array(10).fill("0x7a69"));
      expect([seen.total, seen.most]).to.deep.equal([10, 2]);
    });
  });
});
