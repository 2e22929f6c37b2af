import fs from "node:fs";
import path from "node:path";
import vm from "node:vm";
import { ethers } from "ethers";
import { SandboxPool } from "../executor/sandbox/host/pool";
import { DEFAULT_LIMITS, type Host } from "../executor/sandbox/types";

const ROUNDS = 10_000;
/** keccak256 in plain JavaScript, run by QuickJS in the sandbox and by Node's V8 (bench/actions/keccak256.js). */
const IN_JS = fs.readFileSync(path.join(__dirname, "actions", "keccak256.js"), "utf8");
/** The same rounds through the sandbox's ethers (each a call out of QuickJS into the sandbox process's ethers v6). */
const VIA_ETHERS = `async function main(params) {
  let digest = ethers.utils.hexlify(ethers.utils.toUtf8Bytes("vesta"));
  for (let i = 0; i < params.rounds; i++) digest = ethers.utils.keccak256(digest);
  return digest;
}`;

const host: Host = async () => {
  throw new Error("no host calls expected");
};

/** Runs `code`'s main({rounds}) in a fresh V8 context of this process (Node's own engine, no sandbox), with the real ethers v6 for the ethers variant. */
async function inV8(code: string): Promise<{ ms: number; digest: unknown }> {
  const context = vm.createContext({ ethers: { utils: { hexlify: ethers.hexlify, toUtf8Bytes: ethers.toUtf8Bytes, keccak256: ethers.keccak256 } } });
  vm.runInContext(code, context);
  const t0 = performance.now();
  const digest = await vm.runInContext(`main(${JSON.stringify({ rounds: ROUNDS })})`, context);
  return { ms: performance.now() - t0, digest };
}

async function inSandbox(pool: SandboxPool, code: string): Promise<{ ms: number; digest: unknown }> {
  const limits = { ...DEFAULT_LIMITS, timeoutMs: 120_000 };
  const t0 = performance.now();
  const result = await pool.run({ code: Buffer.from(code), ipfsId: "QmBenchCpu", paramsJson: JSON.stringify({ rounds: ROUNDS }), limits }, host);
  const ms = performance.now() - t0;
  if (result.hasError) throw new Error(`the CPU-heavy action failed: ${JSON.stringify(result.error)}`);
  return { ms, digest: result.response };
}

/**
 * What QuickJS costs on CPU-heavy code (informational): 10,000 rounds of keccak256 in an action,
 * written in plain JavaScript and through the sandbox's ethers, in a sandbox process vs the same
 * code in Node's own V8, in one run (best of 3, interleaved).
 */
export async function printActionCpuBench(): Promise<void> {
  console.log(`== CPU-heavy action (${ROUNDS.toLocaleString("en")} keccak256 rounds): in the sandbox (QuickJS, a sandbox process) vs the same code in Node's V8; informational`);
  const pool = new SandboxPool({ size: 1 });
  try {
    await pool.run({ code: Buffer.from("1"), ipfsId: "QmBenchCpu", paramsJson: "{}", limits: DEFAULT_LIMITS }, host); // start the sandbox
    for (const [name, code] of [
      ["keccak256 in plain JavaScript", IN_JS],
      ["keccak256 through ethers    ", VIA_ETHERS],
    ] as const) {
      let sandbox = Infinity;
      let v8 = Infinity;
      for (let round = 0; round < 3; round++) {
        const s = await inSandbox(pool, code);
        const n = await inV8(code);
        if (s.digest !== n.digest) throw new Error(`${name}: the sandbox answered ${String(s.digest)}, V8 ${String(n.digest)}`);
        sandbox = Math.min(sandbox, s.ms);
        v8 = Math.min(v8, n.ms);
      }
      console.log(`  ${name}   sandbox ${sandbox.toFixed(0)} ms   Node's V8 ${v8.toFixed(1)} ms   sandbox / V8 ${(sandbox / v8).toFixed(1)}x   (${((sandbox * 1000) / ROUNDS).toFixed(1)} us a round in the sandbox)`);
    }
  } finally {
    await pool.close();
  }
}
