import { expect } from "chai";
import fs from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { JsonRpcProvider, Transaction, WebSocketProvider } from "ethers";
import type { EIP1193Provider, RequestArguments } from "hardhat/types";
import { ProviderWrapper } from "hardhat/internal/core/providers/wrapper";
import { freshHre, hardhatWallet as wallet } from "./helpers/freshChain";
import { journalPath, openDurableChain, type DurableChain } from "../scripts/start/chain";
import { createChainServer, type ChainServer } from "../scripts/start/rpcServer";
import { isJsonContentType, originAllowed, parseAllowedOrigins, portRefusal } from "../scripts/start/portPolicy";
import { estimateWithin } from "../scripts/start/estimateGas";
import { readStartEnv } from "../scripts/lib/env";
import { BURNS_EITHER_WAY, creation, LEAST_LIMIT, NEEDS_978K } from "./helpers/gasContracts";

/** The chain's provider, recording each request that reaches it (method and gas). */
class Recorded extends ProviderWrapper {
  readonly seen: Array<{ method: string; gas?: bigint }> = [];
  constructor(inner: EIP1193Provider) {
    super(inner);
  }
  public async request(args: RequestArguments): Promise<unknown> {
    const gas = (args.params as Array<{ gas?: string }> | undefined)?.[0]?.gas;
    this.seen.push({ method: args.method, gas: typeof gas === "string" ? BigInt(gas) : undefined });
    return this._wrappedProvider.request(args);
  }
}

/**
 * npm start's JSON-RPC port (scripts/start/rpcServer.ts, portPolicy.ts, portProvider.ts): a web
 * page could rewrite the contracts through it (review: a cross-origin text/plain POST of
 * hardhat_setStorageAt answered true with `Access-Control-Allow-Origin: *` and AccountConfig's owner
 * was the attacker's); an action's eth_estimateGas capped at 1M gas ran ~16M in one request.
 */
describe("npm start's JSON-RPC port (scripts/start/rpcServer.ts)", function () {
  this.timeout(240_000);

  describe("policy", function () {
    it("serves the standard methods and Hardhat's two status reads; refuses every state edit, impersonation and node control", () => {
      for (const m of ["eth_chainId", "eth_call", "eth_estimateGas", "eth_sendRawTransaction", "eth_sendTransaction", "eth_accounts", "eth_subscribe", "eth_newFilter", "eth_getLogs", "net_version", "web3_clientVersion", "hardhat_metadata", "hardhat_getAutomine"]) {
        expect(portRefusal(m), m).to.equal(undefined);
      }
      for (const m of [
        "hardhat_setStorageAt", "hardhat_setCode", "hardhat_setBalance", "hardhat_setNonce", "hardhat_impersonateAccount", "hardhat_mine", "hardhat_reset",
        "hardhat_setCoinbase", "hardhat_dropTransaction", "hardhat_addCompilationResult", "evm_mine", "evm_increaseTime", "evm_setNextBlockTimestamp",
        "evm_snapshot", "evm_revert", "evm_setAutomine", "evm_setIntervalMining", "evm_setBlockGasLimit", "anvil_setBalance", "anvil_impersonateAccount",
        "debug_traceCall", "debug_traceTransaction", "personal_sign", "personal_unlockAccount", "txpool_content", "admin_peers", "eth_call ", "eth.call", "",
      ]) {
        expect(portRefusal(m), JSON.stringify(m)).to.be.a("string");
      }
    });

    it("accepts requests without an origin, from wallet extensions and from the origins set; JSON bodies only", () => {
      const set = parseAllowedOrigins("http://localhost:5173, https://dapp.example");
      for (const o of [undefined, "chrome-extension://nkbihfbeogaeaoehlefnkodbefgpgknn", "moz-extension://0a1b2c3d-e4f5", "safari-web-extension://ABC-123", "http://localhost:5173", "https://dapp.example"]) {
        expect(originAllowed(o, set), String(o)).to.equal(true);
      }
      for (const o of ["https://evil.example", "null", "http://127.0.0.1:8000", "http://localhost:5174", "https://dapp.example.evil", "chrome-extension://", "chrome-extension://x/y", "file://", ""]) {
        expect(originAllowed(o, set), o).to.equal(false);
      }
      for (const t of ["application/json", "application/json; charset=utf-8", "Application/JSON", " application/json;charset=UTF-8"]) expect(isJsonContentType(t), t).to.equal(true);
      for (const t of [undefined, "", "text/plain", "text/plain;charset=UTF-8", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", "application/jsonp", "application/json-seq"]) {
        expect(isJsonContentType(t), String(t)).to.equal(false);
      }
      for (const bad of ["*", "https://x.example/", "https://x.example/path", "ftp://x.example", "x.example", "https://*.example"]) {
        expect(() => parseAllowedOrigins(bad), bad).to.throw(/VESTA_CHAIN_ALLOWED_ORIGINS: .* is not an origin/);
      }
      expect(readStartEnv({ VESTA_CHAIN_ALLOWED_ORIGINS: "http://localhost:5173" }).chainAllowedOrigins).to.deep.equal(new Set(["http://localhost:5173"]));
      expect(() => readStartEnv({ VESTA_CHAIN_ALLOWED_ORIGINS: "*", VESTA_CHAIN_PORT: "0" })).to.throw(/VESTA_CHAIN_PORT="0"[\s\S]*VESTA_CHAIN_ALLOWED_ORIGINS: "\*" is not an origin/);
    });
  });

  describe("served over a durable chain", function () {
    let dir: string;
    let chain: DurableChain;
    let server: ChainServer;
    let url: string;
    let recorded: Recorded;
    const post = (body: unknown, headers: Record<string, string> = { "content-type": "application/json" }) =>
      fetch(url, { method: "POST", headers, body: typeof body === "string" ? body : JSON.stringify(body) });
    const rpc = async (method: string, params: unknown[] = [], headers?: Record<string, string>) => {
      const j = (await (await post({ jsonrpc: "2.0", id: 1, method, params }, headers)).json()) as { result?: any; error?: { code: number; message: string } };
      if (j.error) throw Object.assign(new Error(j.error.message), { code: j.error.code });
      return j.result;
    };
    const deploy = async (runtime: string) => {
      const [from] = await rpc("eth_accounts");
      const hash = await rpc("eth_sendTransaction", [{ from, data: creation(runtime) }]);
      return (await rpc("eth_getTransactionReceipt", [hash])).contractAddress as string;
    };

    before(async () => {
      dir = fs.mkdtempSync(path.join(os.tmpdir(), "vesta-port-"));
      chain = await openDurableChain(freshHre(), dir, () => undefined);
      recorded = new Recorded(chain.provider);
      server = createChainServer({ hostname: "127.0.0.1", port: 0, chain: recorded, allowedOrigins: new Set(["http://localhost:5173"]) });
      url = `http://127.0.0.1:${(await server.listen()).port}`;
    });
    after(async () => {
      await server?.close();
      await chain?.close();
      fs.rmSync(dir, { recursive: true, force: true });
    });

    it("refuses a web page's request before reading it: a simple text/plain POST, a JSON one, its preflight, its WebSocket; nothing reaches the chain or its journal", async () => {
      const to = await deploy(NEEDS_978K);
      const before = { code: await rpc("eth_getCode", [to]), slot: await rpc("eth_getStorageAt", [to, "0x0"]), block: await rpc("eth_blockNumber"), journal: fs.statSync(journalPath(dir)).size };
      const seen = recorded.seen.length;
      const edit = { jsonrpc: "2.0", id: 1, method: "hardhat_setStorageAt", params: [to, "0x0", `0x${"ab".repeat(32)}`] };
      for (const headers of [{ origin: "https://evil.example", "content-type": "text/plain" }, { origin: "https://evil.example", "content-type": "application/json" }, { origin: "null", "content-type": "text/plain" }]) {
        const res = await post(edit, headers);
        expect(res.status, JSON.stringify(headers)).to.equal(403);
        expect(res.headers.get("access-control-allow-origin")).to.equal(null);
        expect((await res.json()).error.message).to.match(/may not use npm start's chain \(a web page's origin/);
      }
      const preflight = await fetch(url, { method: "OPTIONS", headers: { origin: "https://evil.example", "access-control-request-method": "POST", "access-control-request-headers": "content-type" } });
      expect(preflight.status).to.equal(403);
      expect(preflight.headers.get("access-control-allow-origin")).to.equal(null);
      // Without an origin (a program), a body a page could send without a preflight is refused too.
      for (const type of ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x"]) {
        const res = await post(edit, { "content-type": type });
        expect(res.status, type).to.equal(415);
      }
      expect((await fetch(url)).status).to.equal(405);
      expect(await wsHandshake(url, "https://evil.example")).to.equal(401);
      expect(recorded.seen.length, "requests that reached the chain").to.equal(seen);
      expect({ code: await rpc("eth_getCode", [to]), slot: await rpc("eth_getStorageAt", [to, "0x0"]), block: await rpc("eth_blockNumber"), journal: fs.statSync(journalPath(dir)).size }).to.deep.equal(before);
    });

    it("refuses every state edit and impersonation from a program too (HTTP, batches, WebSocket): -32601, the chain and its journal unchanged", async () => {
      const victim = wallet(9).address;
      const before = { balance: await rpc("eth_getBalance", [victim, "latest"]), block: await rpc("eth_blockNumber"), journal: fs.statSync(journalPath(dir)).size };
      const edits: Array<[string, unknown[]]> = [
        ["hardhat_setStorageAt", [victim, "0x0", `0x${"00".repeat(32)}`]], ["hardhat_setBalance", [victim, "0x0"]], ["hardhat_setCode", [victim, "0x00"]],
        ["hardhat_setNonce", [victim, "0x10"]], ["hardhat_impersonateAccount", [victim]], ["hardhat_mine", ["0x2"]], ["evm_mine", []], ["evm_increaseTime", [3600]],
        ["evm_setAutomine", [false]], ["evm_snapshot", []], ["anvil_setBalance", [victim, "0x0"]], ["debug_traceCall", [{ to: victim }, "latest"]],
      ];
      for (const [method, params] of edits) {
        const err = await rpc(method, params).then(() => undefined, (e: Error & { code: number }) => e);
        expect(err?.code, method).to.equal(-32601);
        expect(err!.message).to.match(new RegExp(`^${method} is not available on npm start's JSON-RPC port`));
      }
      const batch = (await (await post(edits.map(([method, params], id) => ({ jsonrpc: "2.0", id, method, params })))).json()) as Array<{ error?: { code: number } }>;
      expect(batch.map((r) => r.error?.code)).to.deep.equal(edits.map(() => -32601));
      const ws = new WebSocketProvider(url.replace("http", "ws"));
      try {
        await expect(ws.send("hardhat_setBalance", [victim, "0x0"])).to.be.rejectedWith(/hardhat_setBalance is not available on npm start's JSON-RPC port/);
        expect(await ws.send("eth_chainId", [])).to.equal("0x7a69");
      } finally {
        await ws.destroy();
      }
      expect({ balance: await rpc("eth_getBalance", [victim, "latest"]), block: await rpc("eth_blockNumber"), journal: fs.statSync(journalPath(dir)).size }).to.deep.equal(before);
    });

    it("serves a wallet extension (CORS for its origin only), a configured dApp origin and a program: reads and signed transactions, journaled", async () => {
      const ext = "chrome-extension://nkbihfbeogaeaoehlefnkodbefgpgknn";
      const preflight = await fetch(url, { method: "OPTIONS", headers: { origin: ext, "access-control-request-method": "POST", "access-control-request-headers": "content-type" } });
      expect(preflight.status).to.equal(204);
      expect(preflight.headers.get("access-control-allow-origin")).to.equal(ext);
      expect(preflight.headers.get("access-control-allow-headers")).to.equal("content-type");
      const res = await post({ jsonrpc: "2.0", id: 3, method: "eth_chainId", params: [] }, { origin: ext, "content-type": "application/json" });
      expect(res.headers.get("access-control-allow-origin")).to.equal(ext);
      expect(res.headers.get("vary")).to.equal("Origin");
      expect(await res.json()).to.deep.equal({ jsonrpc: "2.0", id: 3, result: "0x7a69" });
      const dapp = await post({ jsonrpc: "2.0", id: 4, method: "eth_blockNumber", params: [] }, { origin: "http://localhost:5173", "content-type": "application/json" });
      expect(dapp.headers.get("access-control-allow-origin")).to.equal("http://localhost:5173");

      // A wallet sends a transaction it signed: accepted, mined and journaled as any other.
      const from = wallet(7), to = wallet(8).address;
      const nonce = Number(await rpc("eth_getTransactionCount", [from.address, "pending"], { origin: ext, "content-type": "application/json" }));
      const raw = await from.signTransaction(Transaction.from({ type: 2, chainId: 31337, nonce, to, value: 5n, gasLimit: 21_000, maxFeePerGas: 10_000_000_000n, maxPriorityFeePerGas: 1_000_000_000n }));
      const journal = fs.statSync(journalPath(dir)).size;
      const hash = await rpc("eth_sendRawTransaction", [raw], { origin: ext, "content-type": "application/json; charset=utf-8" });
      expect((await rpc("eth_getTransactionReceipt", [hash])).status).to.equal("0x1");
      expect(fs.statSync(journalPath(dir)).size).to.be.greaterThan(journal);

      // ethers from a program (no origin): reads, the node's (public) accounts, its metadata.
      const provider = new JsonRpcProvider(url, undefined, { staticNetwork: true });
      try {
        expect(await provider.getBalance(to)).to.be.greaterThan(0n);
        expect((await provider.send("eth_accounts", [])).length).to.be.greaterThan(0);
        expect((await provider.send("hardhat_metadata", [])).chainId).to.equal(31337);
      } finally {
        provider.destroy();
      }
    });

    it("eth_estimateGas naming a gas searches within it, every run its own eth_call of at most that gas (the node's own search went up to its 60M block gas limit in one request)", async () => {
      const needs = await deploy(NEEDS_978K);
      const burns = await deploy(BURNS_EITHER_WAY);
      const runsOf = async (to: string) => {
        const from = recorded.seen.length;
        const estimate = BigInt(await rpc("eth_estimateGas", [{ to, gas: "0xf4240" }]));
        return { estimate, runs: recorded.seen.slice(from) };
      };
      for (const to of [needs, burns]) {
        const { estimate, runs } = await runsOf(to);
        expect(estimate).to.be.within(BigInt(LEAST_LIMIT), BigInt(LEAST_LIMIT) + 1_000n); // the node's tolerance above the least limit
        expect(runs.length).to.be.within(2, 14);
        for (const r of runs) {
          expect(r.method).to.equal("eth_call");
          expect(r.gas! <= 1_000_000n, `a run of ${r.gas} gas`).to.equal(true);
        }
      }
      // A call that fails at the gas named fails as the node's estimate does, after one run.
      const from = recorded.seen.length;
      await expect(rpc("eth_estimateGas", [{ to: needs, gas: "0xf0000" }])).to.be.rejectedWith(/reverted/);
      expect(recorded.seen.slice(from)).to.deep.equal([{ method: "eth_call", gas: 0xf0000n }]);
      // Without a gas, the node estimates as it does (a wallet's or ethers' estimate of an ordinary transaction).
      const plain = recorded.seen.length;
      expect(await rpc("eth_estimateGas", [{ from: wallet(7).address, to: wallet(8).address, value: "0x1" }])).to.equal("0x5209"); // EDR's least estimate: 21,000 + 1
      expect(recorded.seen.slice(plain).map((r) => r.method)).to.deep.equal(["eth_estimateGas"]);
    });
  });

  describe("estimateWithin", function () {
    it("returns the gas named when nothing less succeeds, and stops within the node's tolerance", async () => {
      const limits: bigint[] = [];
      const least = 700_000n;
      const call = async (p: unknown[]) => {
        const gas = BigInt((p[0] as { gas: string }).gas);
        limits.push(gas);
        if (gas < least) throw new Error("out of gas");
      };
      expect(BigInt(await estimateWithin(call, [{ to: "0x00" }], 700_000n))).to.equal(700_000n);
      expect(limits).to.deep.equal([700_000n, 360_500n, 530_250n, 615_125n, 657_563n, 678_782n, 689_391n, 694_696n, 697_348n, 698_674n, 699_337n]);
      limits.length = 0;
      const got = BigInt(await estimateWithin(call, [{ to: "0x00" }, "latest"], 1_000_000n));
      expect(got - least).to.be.within(0n, 1_000n);
      expect(limits.length).to.be.at.most(14);
    });
  });
});

/** The status of a WebSocket handshake to `url` from `origin` (101: accepted). */
function wsHandshake(url: string, origin: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { headers: { connection: "Upgrade", upgrade: "websocket", origin, "sec-websocket-version": "13", "sec-websocket-key": "dGhlIHNhbXBsZSBub25jZQ==" } });
    req.on("upgrade", (res, socket) => (socket.destroy(), resolve(res.statusCode!)));
    req.on("response", (res) => (res.resume(), resolve(res.statusCode!)));
    req.on("error", reject);
    req.end();
  });
}
