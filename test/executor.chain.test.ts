import fs from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { expect } from "chai";
import hre, { ethers } from "hardhat";
import { keccak256, toUtf8Bytes, Wallet } from "ethers";
import { TASK_NODE_CREATE_SERVER } from "hardhat/builtin-tasks/task-names";
import { hostFetch } from "../executor/sandbox/host/fetch";
import { SandboxPool } from "../executor/sandbox/host/pool";
import { DEFAULT_LIMITS, type Host, type HostCall, type RunLimits } from "../executor/sandbox/types";
import { computeCid } from "../executor/cid";
import { call, newAccount, startStack, type Stack } from "./helpers/relayer";
import { countingServer } from "./helpers/network";

const EXAMPLES = path.join(__dirname, "..", "executor", "examples");
const example = (name: string) => fs.readFileSync(path.join(EXAMPLES, name), "utf8");
const SUPPLY = ethers.parseEther("1000000");

/** A JSON-RPC server on loopback answering `answer(method)` (undefined: never answers). */
async function fakeNode(answer: (method: string, res: http.ServerResponse, id: unknown) => unknown) {
  const hanging = new Set<http.ServerResponse>();
  const server = http.createServer(async (req, res) => {
    let body = "";
    for await (const c of req) body += c;
    const { id, method } = JSON.parse(body);
    const result = answer(method, res, id);
    if (result === undefined) return void hanging.add(res);
    if (result !== res) res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ jsonrpc: "2.0", id, result }));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
    close: () => {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      return new Promise((resolve) => server.close(resolve));
    },
  };
}

describe("actions on a chain: ethers v5 providers, contracts and wallets (issue 18)", function () {
  this.timeout(60_000);
  let pool: SandboxPool;
  let rpcUrl: string;
  let node: { close: () => Promise<void> };
  let token: import("ethers").BaseContract;
  const pkp = Wallet.createRandom();
  const limitsWith = (o: Partial<RunLimits> = {}): RunLimits => ({ ...DEFAULT_LIMITS, timeoutMs: 20_000, ...o });

  /** The host of a run: the PKP's key, the chain "local" at the node's URL, fetch with that URL allowed although it is loopback. */
  const run = async (code: string, params: unknown = {}, o: Partial<RunLimits> = {}, urls: Record<string, string> = { local: rpcUrl }) => {
    const limits = limitsWith(o);
    const calls: HostCall[] = [];
    const host: Host = async (c) => {
      calls.push(c);
      if (c.op === "getPrivateKey") return pkp.privateKey;
      if (c.op === "getRpcUrl") {
        if (!(c.chain in urls)) throw new Error(`no RPC URL for chain ${c.chain}`);
        return urls[c.chain];
      }
      if (c.op === "fetch") return hostFetch(c, limits, { rpcUrls: Object.values(urls) });
      throw new Error(`unexpected ${c.op}`);
    };
    const started = Date.now();
    const result = await pool.run({ code: Buffer.from(code), ipfsId: "QmChainTest", paramsJson: JSON.stringify(params), limits }, host);
    return { ...result, calls, fetches: calls.filter((c) => c.op === "fetch").length, ms: Date.now() - started };
  };

  before(async () => {
    const server = await hre.run(TASK_NODE_CREATE_SERVER, { hostname: "127.0.0.1", port: 0, provider: hre.network.provider });
    const { port } = await server.listen();
    rpcUrl = `http://127.0.0.1:${port}`;
    node = server;
    token = (await ethers.deployContract("TestToken", [SUPPLY])) as unknown as import("ethers").BaseContract;
    const [funder] = await ethers.getSigners();
    await (await funder.sendTransaction({ to: pkp.address, value: ethers.parseEther("10") })).wait();
    pool = new SandboxPool({ size: 1 });
  });
  after(async () => {
    await pool?.close();
    await node?.close();
  });

  describe("the examples", function () {
    it("erc20-balance.js reads an ERC-20 through ethers.Contract on the chain getRpcUrl names: four JSON-RPC requests, four fetches", async () => {
      const [funder, holder] = await ethers.getSigners();
      await (await token.connect(funder).getFunction("transfer")(holder.address, ethers.parseEther("12.5"))).wait();
      const r = await run(example("erc20-balance.js"), { chain: "local", tokenAddress: await token.getAddress(), holderAddress: holder.address });
      expect(r.hasError, r.logs).to.equal(false);
      const onChain = await token.getFunction("balanceOf")(holder.address);
      expect(r.response).to.deep.equal({ holder: holder.address, symbol: "TST", decimals: 18, wei: onChain.toString(), balance: ethers.formatUnits(onChain, 18), isBigNumber: true });
      expect(r.fetches).to.equal(4); // eth_chainId once, then one eth_call per read
    });

    it("send-eth.js sends ETH from the PKP wallet and waits for the receipt: the balances change by the amount and the gas", async () => {
      const to = Wallet.createRandom().address;
      const before = await ethers.provider.getBalance(pkp.address);
      const r = await run(example("send-eth.js"), { pkpId: pkp.address, toAddress: to, amountEth: "0.25", chain: "local" });
      expect(r.hasError, r.logs).to.equal(false);
      const out = r.response as { txHash: string; from: string; to: string; blockNumber: number; status: number; type: number };
      expect([out.from, out.to, out.status, out.type]).to.deep.equal([pkp.address, to, 1, 2]);
      const receipt = (await ethers.provider.getTransactionReceipt(out.txHash))!;
      expect([receipt.from, receipt.to, receipt.blockNumber, receipt.status]).to.deep.equal([pkp.address, to, out.blockNumber, 1]);
      expect(await ethers.provider.getBalance(to)).to.equal(ethers.parseEther("0.25"));
      expect(await ethers.provider.getBalance(pkp.address)).to.equal(before - ethers.parseEther("0.25") - receipt.gasUsed * receipt.gasPrice);
    });
  });

  describe("provider, signer and contract as ethers v5 has them", function () {
    it("answers v5's shapes: BigNumber balances, fee data, blocks, receipts with confirmations, the network", async () => {
      const r = await run(`async function main({ address }) {
        const provider = new ethers.providers.JsonRpcProvider(await Lit.Actions.getRpcUrl({ chain: "local" }));
        const network = await provider.getNetwork();
        const balance = await provider.getBalance(address);
        const block = await provider.getBlock("latest");
        const fees = await provider.getFeeData();
        return { network, balanceIsBN: ethers.BigNumber.isBigNumber(balance), balance: balance.toString(), blockNumber: await provider.getBlockNumber(), blockKeys: Object.keys(block),
          gasLimitIsBN: ethers.BigNumber.isBigNumber(block.gasLimit), maxFee: fees.maxFeePerGas.eq(block.baseFeePerGas.mul(2).add(1500000000)), prio: fees.maxPriorityFeePerGas.toString(),
          nonce: await provider.getTransactionCount(address), code: await provider.getCode(address) };
      }`, { address: pkp.address });
      expect(r.hasError, r.logs).to.equal(false);
      const latest = await ethers.provider.getBlock("latest");
      expect(r.response).to.deep.equal({
        network: { chainId: 31337, name: "unknown" },
        balanceIsBN: true,
        balance: (await ethers.provider.getBalance(pkp.address)).toString(),
        blockNumber: latest!.number,
        blockKeys: ["hash", "parentHash", "number", "timestamp", "nonce", "difficulty", "gasLimit", "gasUsed", "miner", "extraData", "transactions", "baseFeePerGas", "_difficulty"],
        gasLimitIsBN: true,
        maxFee: true,
        prio: "1500000000",
        nonce: await ethers.provider.getTransactionCount(pkp.address),
        code: "0x",
      });
    });

    it("sends an ERC-20 transfer through ethers.Contract with a wallet: wait() answers the receipt with the decoded Transfer event", async () => {
      const [funder] = await ethers.getSigners();
      await (await token.connect(funder).getFunction("transfer")(pkp.address, 1000n)).wait();
      const to = Wallet.createRandom().address;
      const r = await run(`async function main({ pkpId, token, to }) {
        const provider = new ethers.providers.StaticJsonRpcProvider(await Lit.Actions.getRpcUrl({ chain: "local" }));
        const wallet = new ethers.Wallet(await Lit.Actions.getPrivateKey({ pkpId }), provider);
        const erc20 = new ethers.Contract(token, ["function transfer(address to, uint256 amount) returns (bool)", "event Transfer(address indexed from, address indexed to, uint256 value)"], wallet);
        const tx = await erc20.transfer(to, ethers.BigNumber.from(400));
        const receipt = await tx.wait();
        const event = receipt.events.find((e) => e.event === "Transfer");
        return { status: receipt.status, confirmations: receipt.confirmations, byzantium: receipt.byzantium, gasUsedIsBN: ethers.BigNumber.isBigNumber(receipt.gasUsed),
          event: [event.args.from, event.args.to, event.args.value.toString(), event.eventSignature], logs: receipt.logs.length };
      }`, { pkpId: pkp.address, token: await token.getAddress(), to });
      expect(r.hasError, r.logs).to.equal(false);
      expect(r.response).to.deep.equal({ status: 1, confirmations: 1, byzantium: true, gasUsedIsBN: true, event: [pkp.address, to, "400", "Transfer(address,address,uint256)"], logs: 1 });
      expect(await token.getFunction("balanceOf")(to)).to.equal(400n);
    });

    it("reports a revert as v5 does: CALL_EXCEPTION with the reason, or the custom error's name and arguments", async () => {
      const r = await run(`async function main({ token }) {
        const provider = new ethers.providers.JsonRpcProvider(await Lit.Actions.getRpcUrl({ chain: "local" }));
        const c = new ethers.Contract(token, ["function failWithReason() view returns (uint256)", "function failWithError() view returns (uint256)", "error NotToday(uint256 day)"], provider);
        const out = [];
        for (const f of ["failWithReason", "failWithError"]) {
          try { await c[f](); out.push("no error"); } catch (e) { out.push({ code: e.code, reason: e.reason, errorName: e.errorName, args: e.errorArgs && e.errorArgs.map(String), method: e.method }); }
        }
        return out;
      }`, { token: await token.getAddress() });
      expect(r.hasError, r.logs).to.equal(false);
      expect(r.response).to.deep.equal([
        { code: "CALL_EXCEPTION", reason: "no reason at all", errorName: "Error", args: ["no reason at all"], method: "failWithReason()" },
        { code: "CALL_EXCEPTION", reason: null, errorName: "NotToday", args: ["7"], method: "failWithError()" },
      ]);
    });

    it("a wallet without a provider cannot send; sending more than the balance fails as v5 reports Hardhat's refusal, and nothing is mined", async () => {
      const poor = Wallet.createRandom();
      const blockBefore = await ethers.provider.getBlockNumber();
      const r = await run(`async function main({ key }) {
        const out = [];
        try { await new ethers.Wallet(key).sendTransaction({ to: "${pkp.address}", value: 1 }); } catch (e) { out.push(e.code); }
        const provider = new ethers.providers.JsonRpcProvider(await Lit.Actions.getRpcUrl({ chain: "local" }));
        try { await new ethers.Wallet(key, provider).sendTransaction({ to: "${pkp.address}", value: ethers.utils.parseEther("1") }); } catch (e) { out.push(e.code, e.error.message); }
        return out;
      }`, { key: poor.privateKey });
      expect(r.hasError, r.logs).to.equal(false);
      // v5 knows "insufficient funds" (geth's words) as INSUFFICIENT_FUNDS; Hardhat says it otherwise, and v5 answers SERVER_ERROR with the node's error.
      const [noProvider, code, message] = r.response as string[];
      expect([noProvider, code]).to.deep.equal(["UNSUPPORTED_OPERATION", "SERVER_ERROR"]);
      expect(message).to.match(/doesn't have enough funds/);
      expect(await ethers.provider.getBlockNumber()).to.equal(blockBefore);
    });

    it("getRpcUrl names the chains it has when asked for another", async () => {
      const r = await run(`async function main() { try { await Lit.Actions.getRpcUrl({ chain: "mars" }); } catch (e) { return e.message; } }`);
      expect(r.response).to.equal("no RPC URL for chain mars");
    });
  });

  describe("attacks", function () {
    it("an action spamming RPC calls spends its fetches: the 51st request is refused, the run ends with maxFetches", async () => {
      const r = await run(`async function main() {
        const provider = new ethers.providers.JsonRpcProvider(await Lit.Actions.getRpcUrl({ chain: "local" }));
        for (let i = 0; i < 1000; i++) await provider.getBlockNumber();
      }`);
      expect(r.hasError).to.equal(true);
      expect(r.error?.limit).to.equal("maxFetches");
      expect(r.fetches).to.equal(DEFAULT_LIMITS.maxFetches); // the channel refused the 51st before the host saw it
    });

    it("a provider pointed at a blocked address is refused before any connection (another loopback port)", async () => {
      const victim = await countingServer((_req, res) => res.end("{}"));
      try {
        const r = await run(`async function main() {
          const provider = new ethers.providers.JsonRpcProvider("http://127.0.0.1:${victim.port}");
          try { await provider.getBlockNumber(); return "reached"; } catch (e) { return [e.code, e.serverError]; }
        }`);
        expect(r.hasError, r.logs).to.equal(false);
        const [code, why] = r.response as string[];
        expect(code).to.equal("SERVER_ERROR");
        expect(why).to.match(/^fetch: 127\.0\.0\.1 is a private or local address \(127\.0\.0\.1: loopback\)/);
        expect(victim.connections).to.equal(0);
      } finally {
        await victim.close();
      }
    });

    it("a JSON-RPC answer of 100 MB is cut at maxFetchBytes: the run ends with that limit, quickly", async () => {
      const chunk = Buffer.alloc(1024 * 1024, "a");
      const big = await fakeNode((method, res) => {
        if (method === "eth_chainId") return "0x7a69";
        res.writeHead(200, { "content-type": "application/json" });
        let sent = 0;
        const pump = () => {
          while (sent < 100 && res.write(chunk)) sent++;
          if (sent < 100) res.once("drain", pump);
          else res.end();
        };
        pump();
        return res;
      });
      try {
        const r = await run(`async function main() { const p = new ethers.providers.JsonRpcProvider(await Lit.Actions.getRpcUrl({ chain: "big" })); return await p.getBlockNumber(); }`, {}, {}, { big: big.url });
        expect(r.hasError).to.equal(true);
        expect(r.error?.limit).to.equal("maxFetchBytes");
        expect(r.ms).to.be.lessThan(5000);
      } finally {
        await big.close();
      }
    });

    it("a JSON-RPC answer nested 200,000 deep is an error the action sees; the sandbox keeps serving", async () => {
      const deep = await fakeNode((method, res, id) => {
        if (method === "eth_chainId") return "0x7a69";
        res.writeHead(200, { "content-type": "application/json" }).end(`{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":${"[".repeat(200_000)}${"]".repeat(200_000)}}`);
        return res;
      });
      try {
        const r = await run(`async function main() { const p = new ethers.providers.JsonRpcProvider(await Lit.Actions.getRpcUrl({ chain: "deep" }));
          try { await p.getBlockNumber(); return "parsed"; } catch (e) { return [e.code, e.reason]; } }`, {}, {}, { deep: deep.url });
        expect(r.hasError, r.logs).to.equal(false);
        expect(r.response).to.deep.equal(["SERVER_ERROR", "processing response error"]);
        expect((await run("async function main() { return 7 }")).response).to.equal(7);
      } finally {
        await deep.close();
      }
    });

    it("a contract call that never answers ends with the run's timeout (and the fetch with it)", async () => {
      const silent = await fakeNode((method) => (method === "eth_chainId" ? "0x7a69" : undefined));
      try {
        const r = await run(
          `async function main() { const p = new ethers.providers.JsonRpcProvider(await Lit.Actions.getRpcUrl({ chain: "silent" }));
             return await new ethers.Contract("${pkp.address}", ["function f() view returns (uint)"], p).f(); }`,
          {}, { timeoutMs: 1500 }, { silent: silent.url },
        );
        expect(r.hasError).to.equal(true);
        expect(r.error?.limit).to.equal("timeoutMs");
        expect(r.ms).to.be.lessThan(1500 + 2000);
      } finally {
        await silent.close();
      }
    });

    it("tx.wait on a hash that never mines polls until the run's timeout, or until its fetches run out when it polls fast", async () => {
      const hash = keccak256(toUtf8Bytes("never mined"));
      const slow = await run(`async function main() { const p = new ethers.providers.JsonRpcProvider(await Lit.Actions.getRpcUrl({ chain: "local" })); await p.waitForTransaction("${hash}"); }`, {}, { timeoutMs: 1500 });
      expect([slow.hasError, slow.error?.limit]).to.deep.equal([true, "timeoutMs"]);
      expect(slow.fetches).to.equal(2); // eth_chainId, one receipt poll; the next waits 4 s
      const fast = await run(`async function main() { const p = new ethers.providers.JsonRpcProvider(await Lit.Actions.getRpcUrl({ chain: "local" })); p.pollingInterval = 1; await p.waitForTransaction("${hash}"); }`);
      expect([fast.hasError, fast.error?.limit]).to.deep.equal([true, "maxFetches"]);
      const bounded = await run(`async function main() { const p = new ethers.providers.JsonRpcProvider(await Lit.Actions.getRpcUrl({ chain: "local" })); p.pollingInterval = 50;
        try { await p.waitForTransaction("${hash}", 1, 200); } catch (e) { return e.code; } }`);
      expect([bounded.hasError, bounded.response]).to.deep.equal([false, "TIMEOUT"]);
    });

    it("the node's own accounts and controls are out of reach through the RPC URL: eth_sendTransaction, hardhat_setBalance, batches", async () => {
      const [funder] = await ethers.getSigners();
      const before = await ethers.provider.getBalance(funder.address);
      const r = await run(`async function main({ from }) {
        const p = new ethers.providers.JsonRpcProvider(await Lit.Actions.getRpcUrl({ chain: "local" }));
        const out = [];
        for (const [m, params] of [["eth_sendTransaction", [{ from, to: "${pkp.address}", value: "0xde0b6b3a7640000" }]], ["hardhat_setBalance", ["${pkp.address}", "0x1"]], ["eth_accounts", []]]) {
          try { await p.send(m, params); out.push("sent " + m); } catch (e) { out.push(e.serverError); }
        }
        return out;
      }`, { from: funder.address });
      expect(r.hasError, r.logs).to.equal(false);
      const refused = r.response as string[];
      expect(refused[0]).to.match(/^fetch: the JSON-RPC method "eth_sendTransaction" may not be sent to the deployment's RPC URL/);
      expect(refused[1]).to.match(/^fetch: the JSON-RPC method "hardhat_setBalance" may not be sent/);
      expect(refused[2]).to.match(/^fetch: the JSON-RPC method "eth_accounts" may not be sent/);
      expect(await ethers.provider.getBalance(funder.address)).to.equal(before);
    });
  });

  describe("through the relayer, as under npm start (no private fetches; the local chain given to actions by name)", function () {
    let stack: Stack;
    before(async () => {
      stack = await startStack({ env: { VESTA_ACTION_FETCH_PRIVATE: "false" } });
    });
    after(async () => stack?.stop());

    it("get_node_chain_config's chain_name is the name getRpcUrl answers, and send-eth.js moves ETH from a PKP the relayer derives", async () => {
      const chain = (await call(stack, "GET", "/get_node_chain_config")).body.chain_name;
      expect(chain).to.equal("local");
      const { apiKey } = await newAccount(stack);
      const pkpId = (await call(stack, "GET", "/create_wallet", { key: apiKey })).body.wallet_address as string;
      const [funder] = await ethers.getSigners();
      await (await funder.sendTransaction({ to: pkpId, value: ethers.parseEther("1") })).wait();
      const to = Wallet.createRandom().address;
      const code = example("send-eth.js");
      const r = await call(stack, "POST", "/lit_action", { key: apiKey, body: { code, js_params: { pkpId, toAddress: to, amountEth: "0.5", chain } } });
      expect(r.status, JSON.stringify(r.body)).to.equal(200);
      expect(r.body.has_error, JSON.stringify(r.body)).to.equal(false);
      expect(r.body.response.from).to.equal(pkpId);
      expect(r.body.ipfs_id).to.equal(await computeCid(code));
      expect(await ethers.provider.getBalance(to)).to.equal(ethers.parseEther("0.5"));
      const url = await call(stack, "POST", "/lit_action", { key: apiKey, body: { code: `async function main() { return await Lit.Actions.getRpcUrl({ chain: "local" }); }` } });
      expect(url.body.response).to.equal(stack.rpcUrl);
    });
  });
});
