import { expect } from "chai";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { EthereumProvider } from "hardhat/types";
import { freshHre } from "./helpers/freshChain";
import { openDurableChain } from "../scripts/start/chain";
import { TraceMemory } from "../scripts/start/traceMemory";

/**
 * EDR records every step of each call that executes EVM code and keeps the record in a native
 * object V8 does not weigh: nothing made V8 collect it, so npm start's chain kept ~50 MB per 1M-gas
 * call until the process was killed (review: "one run takes the local chain down").
 */
describe("npm start's chain gives back the memory of the calls it executed (scripts/start/traceMemory.ts)", function () {
  this.timeout(300_000);

  it("collects the young generation after 20 ms of executing calls, the whole heap after 1 s; reads count for nothing", () => {
    const calls: unknown[] = [];
    const t = new TraceMemory((o) => void calls.push(o?.type ?? "major"));
    for (let i = 0; i < 100; i++) t.after("eth_getBalance", 50);
    expect(calls).to.deep.equal([]);
    t.after("eth_call", 15);
    expect(calls).to.deep.equal([]);
    t.after("eth_estimateGas", 6);
    expect(calls).to.deep.equal(["minor"]);
    for (let i = 0; i < 48; i++) t.after("eth_sendRawTransaction", 20);
    expect(calls.filter((c) => c === "major")).to.have.length(0);
    t.after("evm_mine", 20);
    expect(calls.at(-1)).to.equal("major");
  });

  it("40 calls that burn 1M gas each leave the process under 1.2 GB more (they kept ~2.1 GB, growing)", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "vesta-traces-"));
    const h = freshHre();
    const chain = await openDurableChain(h, dir, () => undefined);
    try {
      const p = h.network.provider as EthereumProvider;
      await p.request({ method: "eth_call", params: [{ data: "0x5b600056", gas: "0x5208" }, "latest"] }).catch(() => undefined); // the node's first call builds its decoder
      const rss0 = process.memoryUsage().rss;
      let peak = rss0;
      const t0 = Date.now();
      for (let i = 0; i < 40; i++) {
        await expect(p.request({ method: "eth_call", params: [{ data: "0x5b600056", gas: "0xf4240" }, "latest"] })).to.be.rejectedWith(/ran out of gas/);
        peak = Math.max(peak, process.memoryUsage().rss);
      }
      const grew = (peak - rss0) / 2 ** 20;
      console.log(`      40 calls of 1M gas in ${Date.now() - t0} ms: the process grew by ${grew.toFixed(0)} MB at most`);
      expect(grew).to.be.below(1200);
    } finally {
      await chain.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
