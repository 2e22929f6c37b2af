import fs from "node:fs";
import path from "node:path";
import { expect } from "chai";
import { keccak256, toUtf8Bytes } from "ethers";
import { newQuickJSWASMModuleFromVariant, newVariant, RELEASE_SYNC } from "quickjs-emscripten";
import { SandboxPool } from "../executor/sandbox/host/pool";
import { sandboxFiles } from "../executor/sandbox/host/sandbox-files";
import { WarmContext } from "../executor/sandbox/process/context";
import { readGuestSources } from "../executor/sandbox/process/guest-bindings";
import { ActionRun } from "../executor/sandbox/process/run";
import { heapTop, layoutOf, staticEnd } from "../executor/sandbox/process/snapshot";
import { DEFAULT_LIMITS, type Host, type HostCall, type RunLimits } from "../executor/sandbox/types";

const limitsWith = (overrides: Partial<RunLimits> = {}): RunLimits => ({ ...DEFAULT_LIMITS, timeoutMs: 10_000, ...overrides });
const request = (code: string, limits = limitsWith()) => ({ code: Buffer.from(code, "utf8"), ipfsId: "QmSnapshot", paramsJson: "{}", limits });

/** What a run can see of the sandbox's globals: the same in every run that starts from the copy. */
const FINGERPRINT = `async function main() {
  const own = (o) => Object.getOwnPropertyNames(o).sort().join(",");
  return {
    globals: own(globalThis),
    objectProto: own(Object.prototype), arrayProto: own(Array.prototype), functionProto: own(Function.prototype), promiseProto: own(Promise.prototype),
    mapNative: String([].map).includes("[native code]"), pushNative: String([].push).includes("[native code]"), thenNative: String(Promise.prototype.then).includes("[native code]"),
    json: JSON.stringify({ a: [1, "b"] }), parse: JSON.parse("[1]").length,
    polluted: ({}).polluted === undefined && [].polluted === undefined,
    leak: typeof leak, registry: typeof registry, keep: typeof keep,
    lit: own(Lit.Actions), litExtra: Lit.Actions.extra === undefined && Lit.extra === undefined,
    keccak: ethers.utils.keccak256(ethers.utils.toUtf8Bytes("a")),
    ethersPatched: ethers.patched === undefined && ethers.Wallet.prototype.patched === undefined,
    consoleLog: String(console.log).includes("[native code]") || String(console.log).length > 0,
    errorLimit: Error.stackTraceLimit, prepare: typeof Error.prepareStackTrace,
    symbolFor: Symbol.for("vesta.secret").description,
    mathRandom: Math.random.name, mathMax: Math.max(1, 2),
  };
}`;

/** A host that records every call (none is expected of these actions). */
function recordingHost() {
  const calls: HostCall[] = [];
  const host: Host = async (call) => {
    calls.push(call);
    throw new Error("no host calls here");
  };
  return { host, calls };
}

describe("every run starts from the warm context's copy (issue 18)", function () {
  this.timeout(120_000);

  describe("through a sandbox process: nothing of one run reaches the next in the same process", function () {
    let pool: SandboxPool;
    before(async () => {
      pool = new SandboxPool({ size: 1 });
    });
    after(async () => pool.close());
    const run = (code: string, limits = limitsWith()) => {
      const { host, calls } = recordingHost();
      return pool.run(request(code, limits), host).then((result) => ({ ...result, calls }));
    };

    it("globals, prototypes, the Lit namespace, ethers, console, JSON, Error and the symbol registry as a run leaves them are not the next run's", async () => {
      const before = await run(FINGERPRINT);
      expect(before.hasError, JSON.stringify(before)).to.equal(false);
      expect((before.response as { keccak: string }).keccak).to.equal(keccak256(toUtf8Bytes("a")));
      const tamper = await run(`
        Lit.Actions.setResponse("tampered"); // first: the rest breaks JSON for this run
        globalThis.leak = "secret of run A"; var keep = [1, 2, 3];
        Object.prototype.polluted = 1; Array.prototype.polluted = 1;
        Array.prototype.map = () => "hijacked"; Array.prototype.push = () => 0; Promise.prototype.then = function () { return this; };
        Function.prototype.extra = 1; JSON.stringify = () => '"forged"'; JSON.parse = () => [];
        try { Lit.Actions.extra = 1; } catch {} try { Lit.extra = 1; } catch {}
        ethers.patched = 1; ethers.utils.keccak256 = () => "0xdead"; ethers.Wallet.prototype.patched = 1;
        console.log = () => {}; Error.stackTraceLimit = 0; Error.prepareStackTrace = () => "forged";
        Symbol.for("vesta.secret"); Math.max = () => -1; Math.random = () => 0.5;
        Object.freeze(Object.prototype);`);
      expect(tamper, JSON.stringify(tamper)).to.deep.include({ hasError: false, response: "tampered" });
      const after = await run(FINGERPRINT);
      expect(after.hasError, JSON.stringify(after)).to.equal(false);
      expect(after.response).to.deep.equal(before.response);
      expect(pool.stats()).to.include({ started: 1, replaced: 0 });
    });

    it("Math.random is seeded anew in each run (the copy holds no seed): two runs draw different numbers, each uniform in [0, 1)", async () => {
      const draw = `async function main() { const xs = []; for (let i = 0; i < 20000; i++) xs.push(Math.random());
        return { first: xs.slice(0, 4), min: Math.min(...xs), max: Math.max(...xs), mean: xs.reduce((a, b) => a + b, 0) / xs.length, name: Math.random.name } }`;
      const [a, b] = [await run(draw), await run(draw)];
      type Draw = { first: number[]; min: number; max: number; mean: number; name: string };
      for (const r of [a, b]) {
        const d = r.response as Draw;
        expect(d.min).to.be.at.least(0);
        expect(d.max).to.be.below(1);
        expect(d.mean).to.be.within(0.48, 0.52);
        expect(d.name).to.equal("random");
      }
      expect((a.response as Draw).first).to.not.deep.equal((b.response as Draw).first);
      expect(pool.stats()).to.include({ started: 1, replaced: 0 });
    });

    it("what a run leaves running (a finalizer that would call the host, a pending promise, a timer) and the memory it holds do not reach the next run", async () => {
      const leaving = await run(`
        globalThis.registry = new FinalizationRegistry(() => { console.log("run A's finalizer"); Lit.Actions.getPrivateKey({ pkpId: "0x1111111111111111111111111111111111111111" }); });
        for (let i = 0; i < 1000; i++) registry.register({ i }, i);
        globalThis.keep = []; for (let i = 0; i < 40; i++) keep.push("x".repeat(1024 * 1024 - 16) + i);
        new Promise(() => {}).then(() => console.log("never"));
        setTimeout(() => console.log("run A's timer"), 300);
        Lit.Actions.setResponse("left");`);
      expect(leaving).to.deep.include({ hasError: false, response: "left" });
      const next = await run(`async function main() {
        const big = []; for (let i = 0; i < 48; i++) big.push("y".repeat(1024 * 1024 - 16) + i); // 48 MB of this run's 64 MB
        await new Promise((resolve) => setTimeout(resolve, 400)); // past run A's timer
        return [big.length, typeof registry, typeof keep];
      }`);
      expect(next).to.deep.include({ hasError: false, response: [48, "undefined", "undefined"], logs: "" });
      expect(next.calls).to.deep.equal([]);
      expect(pool.stats()).to.include({ started: 1, replaced: 0 });
    });

    it("a run stopped by its deadline or its memory limit leaves the next run its whole time and memory", async () => {
      const timedOut = await run("while (true) {}", limitsWith({ timeoutMs: 200 }));
      expect(timedOut.error?.limit).to.equal("timeoutMs");
      const outOfMemory = await run("const a = []; while (true) a.push('z'.repeat(1 << 20) + a.length);", limitsWith({ memoryBytes: 32 * 1024 * 1024 }));
      expect(outOfMemory.error?.limit).to.equal("memoryBytes");
      const next = await run(`async function main() {
        const t = Date.now(); let n = 0; while (Date.now() - t < 400) n++; // longer than the first run's deadline
        const big = []; for (let i = 0; i < 28; i++) big.push("w".repeat(1024 * 1024 - 16) + i); // most of 32 MB
        return big.length;
      }`, limitsWith({ timeoutMs: 5000, memoryBytes: 32 * 1024 * 1024 }));
      expect(next).to.deep.include({ hasError: false, response: 28 });
      expect(pool.stats()).to.include({ started: 1, replaced: 0 });
    });

    it("runs of code that names ethers start from the copy that holds its modules, the others from the first: in any order, neither sees what a run of the other kind did", async () => {
      // The same fingerprint without the word: it reaches the global by another name, and so starts from the first copy (its run compiles the modules).
      const unnamed = FINGERPRINT.replaceAll("ethers.", 'globalThis["eth" + "ers"].');
      expect(unnamed).to.not.match(/\bethers\b/);
      const clean = await run(FINGERPRINT);
      expect(clean.hasError, JSON.stringify(clean)).to.equal(false);
      expect(await run(unnamed)).to.deep.include({ hasError: false, response: clean.response });
      const tamperNamed = 'ethers.utils.keccak256 = () => "0xdead"; ethers.patched = 1; Object.prototype.polluted = 1; globalThis.leak = 1; Lit.Actions.setResponse("named");';
      const tamperUnnamed = 'const e = globalThis["eth" + "ers"]; e.utils.keccak256 = () => "0xdead"; e.Wallet.prototype.patched = 1; Array.prototype.polluted = 1; var keep = 1; Lit.Actions.setResponse("unnamed");';
      for (const [tamper, check] of [[tamperNamed, unnamed], [tamperUnnamed, FINGERPRINT], [tamperNamed, FINGERPRINT], [tamperUnnamed, unnamed]]) {
        expect(await run(tamper)).to.deep.include({ hasError: false });
        const after = await run(check);
        expect(after.hasError, JSON.stringify(after)).to.equal(false);
        expect(after.response).to.deep.equal(clean.response);
      }
      // v5 and v6 surfaces, an Interface and a BigNumber, from the copy, run after run.
      const v5 = `async function main() { const i = new ethers.utils.Interface(["function balanceOf(address) view returns (uint256)"]);
        return [i.encodeFunctionData("balanceOf", ["0x${"11".repeat(20)}"]), ethers.BigNumber.from(7).mul(6).toString(), ethers.keccak256("0x01")] }`;
      const first = await run(v5);
      expect(first.response).to.deep.equal([`0x70a08231${"0".repeat(24)}${"11".repeat(20)}`, "42", keccak256("0x01")]);
      for (let i = 0; i < 3; i++) {
        expect(await run(v5)).to.deep.include({ response: first.response });
        expect(await run("async function main() { return 1 }")).to.deep.include({ response: 1 });
      }
      expect(pool.stats()).to.include({ started: 1, replaced: 0 });
    });
  });

  describe("in process: the warm context, its copy and its seal", function () {
    const wasm = fs.readFileSync(sandboxFiles().wasmFile);
    const warmContext = async () => {
      const memory = new WebAssembly.Memory({ initial: 256, maximum: 16384 });
      const wasmBinary = wasm.buffer.slice(wasm.byteOffset, wasm.byteOffset + wasm.byteLength);
      const qjs = await newQuickJSWASMModuleFromVariant(newVariant(RELEASE_SYNC, { wasmMemory: memory, wasmBinary }));
      return { memory, qjs, warm: new WarmContext(qjs, readGuestSources(path.join(__dirname, "..", "executor", "sandbox", "guest")), memory, layoutOf(wasm)) };
    };

    it("copies the memory up to malloc's top: walking the heap's blocks from its start ends at the top, none lies past it", async () => {
      const { memory, qjs } = await warmContext();
      const layout = layoutOf(wasm);
      const top = heapTop((qjs as unknown as { module: Parameters<typeof heapTop>[0] }).module, layout, memory);
      expect(top - layout.stackTop).to.be.within(64 * 1024, 1024 * 1024); // the heap of one runtime and context
      expect(layout.stackTop - layout.dataEnd).to.be.at.least(1024 * 1024);
      // The static data copied ends where the untouched stack starts, right past the data segments and
      // a small bss: a build whose bss held 64 KB of zeros before more data would fail here first.
      const fresh = new WebAssembly.Memory({ initial: 256, maximum: 16384 });
      await newQuickJSWASMModuleFromVariant(newVariant(RELEASE_SYNC, { wasmMemory: fresh, wasmBinary: wasm.buffer.slice(wasm.byteOffset, wasm.byteOffset + wasm.byteLength) }));
      expect(staticEnd(fresh, layout) - layout.dataEnd).to.be.within(64 * 1024, 64 * 1024 + 16 * 1024);
      // A corrupt size field (the walk does not land on the top) is refused.
      const view = new DataView(memory.buffer);
      const firstHead = view.getUint32(layout.stackTop + 4, true);
      view.setUint32(layout.stackTop + 4, (firstHead & 7) | 8, true);
      expect(() => heapTop((qjs as unknown as { module: Parameters<typeof heapTop>[0] }).module, layout, memory)).to.throw("not where this sandbox expects it");
      view.setUint32(layout.stackTop + 4, firstHead, true);
      expect(heapTop((qjs as unknown as { module: Parameters<typeof heapTop>[0] }).module, layout, memory)).to.equal(top);
    });

    it("runs from the copy many times over, whatever the runs did, with the same outcome", async () => {
      const { memory, warm } = await warmContext();
      const once = async (code: string) => {
        const run = new ActionRun(warm.fresh, memory, { code, ipfsId: "Qm", paramsJson: "{}", limits: limitsWith({ timeoutMs: 2000 }) }, () => undefined);
        const { result, crashed } = await run.start();
        expect(crashed).to.equal(false);
        expect(run.release()).to.equal(true);
        warm.reset();
        return result;
      };
      const first = await once(FINGERPRINT);
      for (let i = 0; i < 20; i++) {
        await once("Object.prototype.x = 1; globalThis.y = ethers.utils.id('a'); new TextEncoder().encode('é'); (function f() { f() })();");
        await once("throw new Error('boom')");
      }
      expect(await once(FINGERPRINT)).to.deep.equal(first);
    });

    it("keeps a second copy with the ethers modules compiled: a run of code that names ethers compiles none of them, and the first copy's runs never get them", async () => {
      const { memory, warm } = await warmContext();
      expect(warm.ethersSnapshotBytes).to.be.above(warm.snapshotBytes + 256 * 1024);
      expect(warm.holdsEthers).to.equal(false);
      // What each run compiled of the guest modules (ActionRun.room is asked before each compile in a run).
      const compiled: string[] = [];
      const room = ActionRun.prototype.room;
      ActionRun.prototype.room = function (text: string, what: string) {
        if (what.startsWith("loading the sandbox's")) compiled.push(what.replace("loading the sandbox's ", "").replace(" module", ""));
        return room.call(this, text, what);
      };
      try {
        const once = async (code: string) => {
          compiled.length = 0;
          warm.prepare(code);
          const run = new ActionRun(warm.fresh, memory, { code, ipfsId: "Qm", paramsJson: "{}", limits: limitsWith({ timeoutMs: 5000 }) }, () => undefined);
          const { result, crashed } = await run.start();
          expect(crashed).to.equal(false);
          expect(run.release()).to.equal(true);
          warm.reset();
          return { response: result.responseJson, error: result.error, compiled: [...compiled], ethersCopy: warm.holdsEthers };
        };
        const named = 'async function main() { return [ethers.utils.keccak256("0x01"), ethers.BigNumber.from(2).pow(10).toString(), ethers.id("a")] }';
        const unnamed = 'async function main() { const e = globalThis["eth" + "ers"]; return [e.utils.keccak256("0x01"), e.BigNumber.from(2).pow(10).toString(), e.id("a")] }';
        const expected = JSON.stringify([keccak256("0x01"), "1024", keccak256(toUtf8Bytes("a"))]);
        for (let i = 0; i < 3; i++) {
          const a = await once(named);
          expect(a).to.deep.include({ response: expected, compiled: [], ethersCopy: true });
          const b = await once(unnamed);
          expect(b).to.deep.include({ response: expected, ethersCopy: false });
          expect(b.compiled).to.include.members(["ethers", "ethers5-utils", "ethers5-bignumber"]);
          expect(await once("async function main() { return typeof Object.prototype.x }")).to.deep.include({ response: '"undefined"', compiled: [], ethersCopy: false });
        }
      } finally {
        ActionRun.prototype.room = room;
      }
    });

    it("is sealed: no host function, host reference or context can be made once the copy is taken", async () => {
      const { warm } = await warmContext();
      const { ctx, rt } = warm.fresh;
      expect(() => ctx.newFunction("late", () => undefined)).to.throw(/cannot be made once the warm context is copied/);
      expect(() => ctx.newHostRef({})).to.throw(/cannot be made once the warm context is copied/);
      expect(() => rt.newContext()).to.throw(/cannot be made once the warm context is copied/);
    });

    it("a run that is over sends nothing more to the host", async () => {
      const { memory, warm } = await warmContext();
      const sent: string[] = [];
      const run = new ActionRun(warm.fresh, memory, { code: "1", ipfsId: "Qm", paramsJson: "{}", limits: limitsWith() }, (_id, op) => sent.push(op));
      await run.start();
      expect(() => run.call("getPrivateKey", "{}")).to.throw("the run is over");
      expect(sent).to.deep.equal([]);
    });

    it("refuses a WASM memory layout it does not know, and a heap it cannot measure", () => {
      const empty = Uint8Array.from([0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00]); // a module with no globals nor data
      expect(() => layoutOf(empty)).to.throw("the QuickJS WASM memory layout is not data, stack, heap");
      expect(() => layoutOf(wasm.subarray(0, 100))).to.throw(/truncated|layout/);
      const layout = layoutOf(wasm);
      const freed: number[] = [];
      const spare = new WebAssembly.Memory({ initial: 1 });
      const allocator = (at: number) => ({ _malloc: () => at, _free: (p: number) => void freed.push(p) });
      expect(() => heapTop(allocator(0), layout, spare)).to.throw("malloc failed");
      expect(() => heapTop(allocator(layout.stackTop - 16), layout, spare)).to.throw("not where this sandbox expects it");
      expect(() => heapTop(allocator(layout.stackTop + 64 * 1024 * 1024), layout, spare)).to.throw("not where this sandbox expects it");
      expect(freed).to.deep.equal([layout.stackTop - 16, layout.stackTop + 64 * 1024 * 1024]);
    });
  });
});
