/**
 * What one ethers call may cost the sandbox process (executor/sandbox/process/ethers-bounds.ts, with
 * abi-decode-cost.ts and typed-data-cost.ts): inputs whose cost is not their size. ABI data whose
 * offsets all name one payload, ethers' decoder copying all the data for each word it reads, ENS
 * names of many labels, typed data whose types are a chain or a diamond, RLP of many items or deep
 * lists, a normalization that multiplies text by 18, encodes of many values, errors that write a
 * huge argument into their message. Each must end with a clean error the action may catch (the
 * memory limit, marking the run; a RangeError for a cap), in well under the run's timeout, and the
 * sandbox process must keep serving; and a call within its budget must end in well under a second.
 */
import { expect } from "chai";
import * as ethers from "ethers";
import { decodeCounts } from "../executor/sandbox/process/abi-decode-cost";
import { callEthers } from "../executor/sandbox/process/ethers-calls";
import { checkEthersCall } from "../executor/sandbox/process/ethers-bounds";
import { decodeTagged, MAX_BIGINT_CHARS } from "../executor/sandbox/process/tagged-json";
import { SandboxPool } from "../executor/sandbox/host/pool";
import { DEFAULT_LIMITS, type Host, type RunLimits } from "../executor/sandbox/types";

const MEMORY = /memory limit exceeded: the action may use at most 64 MB \(memoryBytes\)$/;

/** A seeded generator, so a failure reproduces. */
function random(seed: number) {
  return () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
}

describe("ethers calls whose cost is not their arguments' size", function () {
  this.timeout(120_000);

  describe("in the sandbox: each hostile input ends with an error the action catches, quickly; the sandbox lives", function () {
    let pool: SandboxPool;
    const host: Host = async () => {
      throw new Error("no host calls here");
    };
    const limits: RunLimits = { ...DEFAULT_LIMITS, timeoutMs: 20_000 };
    const run = (code: string) => pool.run({ code: Buffer.from(code), ipfsId: "QmCosts", paramsJson: "{}", limits }, host);

    before(async () => {
      pool = new SandboxPool({ size: 1 });
      await run("1");
    });
    after(() => pool.close());

    // Helpers the actions share: ABI words, data whose offsets alias.
    const PRELUDE = `const w = (n) => n.toString(16).padStart(64, "0");
      // bytes[] (or string[]) of n entries that all point at one payload of b bytes
      const aliasedBytes = (n, b) => { const p = [w(32), w(n)]; for (let i = 0; i < n; i++) p.push(w(32 * n)); p.push(w(b), "ab".repeat(b)); return "0x" + p.join(""); };
      // uint256[][] of n entries that all point at one array of m words
      const aliasedWords = (n, m) => { const p = [w(32), w(n)]; for (let i = 0; i < n; i++) p.push(w(32 * n)); p.push(w(m)); for (let i = 0; i < m; i++) p.push(w(i)); return "0x" + p.join(""); };
      const coder = ethers.utils.defaultAbiCoder;`;
    const chain = (n: number) => `(() => { const t = {}; for (let i = 0; i < ${n}; i++) t["T" + i] = i + 1 < ${n} ? [{ name: "n", type: "T" + (i + 1) + "[]" }] : [{ name: "v", type: "uint256" }]; return t; })()`;
    const diamond = (layers: number) =>
      `(() => { const t = { Top: [{ name: "a", type: "A1" }, { name: "b", type: "B1" }] }; for (let i = 1; i <= ${layers}; i++) { const next = i < ${layers} ? [{ name: "a", type: "A" + (i + 1) }, { name: "b", type: "B" + (i + 1) }] : [{ name: "v", type: "uint256" }]; t["A" + i] = next; t["B" + i] = next; } return t; })()`;
    const iface = `new ethers.utils.Interface(["function f(bytes[] a) returns (bytes[])", "event E(bytes[] a)", "error X(bytes[] a)"])`;
    const cases: [string, string, RegExp][] = [
      // ABI decodes: what the data's offsets make, and ethers' copies, on every path that decodes.
      ["v6 decode of bytes[]: 512 entries at one 64 KB payload (82 KB: 32 MB of values)", `ethers.AbiCoder.defaultAbiCoder().decode(["bytes[]"], aliasedBytes(512, 65536))`, MEMORY],
      ["v5 decode of string[]: 64 entries at one 16 KB payload (18 KB)", `coder.decode(["string[]"], aliasedBytes(64, 16384))`, MEMORY],
      ["v6 decode of uint256[][]: 1,000 entries at one array of 1,000 words (64 KB: a million values)", `ethers.AbiCoder.defaultAbiCoder().decode(["uint256[][]"], aliasedWords(1000, 1000))`, MEMORY],
      ["v5 decode of a flat uint256[] of 16,000 words (512 KB: ethers copies it for each word)", `coder.decode(["uint256[]"], "0x" + w(32) + w(16000) + w(7).repeat(16000))`, MEMORY],
      ["interface.decodeFunctionResult of aliased bytes[]", `${iface}.decodeFunctionResult("f", aliasedBytes(512, 65536))`, MEMORY],
      ["interface.decodeFunctionData of aliased bytes[]", `const i = ${iface}; i.decodeFunctionData("f", i.getSighash("f") + aliasedBytes(512, 65536).slice(2))`, MEMORY],
      ["interface.parseTransaction of aliased bytes[]", `const i = ${iface}; i.parseTransaction({ data: i.getSighash("f") + aliasedBytes(512, 65536).slice(2) })`, MEMORY],
      ["interface.decodeErrorResult of aliased bytes[]", `const i = ${iface}; i.decodeErrorResult("X", i.getSighash("X") + aliasedBytes(512, 65536).slice(2))`, MEMORY],
      ["interface.parseError of aliased bytes[]", `const i = ${iface}; i.parseError(i.getSighash("X") + aliasedBytes(512, 65536).slice(2))`, MEMORY],
      ["interface.decodeEventLog of aliased bytes[]", `const i = ${iface}; i.decodeEventLog("E", aliasedBytes(512, 65536), [i.getEventTopic("E")])`, MEMORY],
      ["interface.parseLog of aliased bytes[]", `const i = ${iface}; i.parseLog({ data: aliasedBytes(512, 65536), topics: [i.getEventTopic("E")] })`, MEMORY],
      // ENS names: dnsEncode was quadratic in labels (each label's check wrote the whole name).
      ["dnsEncode of a 200 KB name of 100,000 labels", `ethers.dnsEncode("a.".repeat(100000) + "eth")`, /^RangeError: ethers\.dnsEncode: an ENS name may have at most 1024 characters, got 200003$/],
      ["v5 namehash of 200 labels", `ethers.utils.namehash("a.".repeat(200) + "eth")`, /^RangeError: ethers\.namehash: an ENS name may have at most 127 labels, got 201$/],
      ["isValidName of 2,000 labels", `ethers.isValidName("a.".repeat(2000) + "eth")`, /^RangeError: ethers\.isValidName: an ENS name may have at most 1024 characters/],
      // Typed data: the cycle check walks every path; full types hold every type below them.
      ["_TypedDataEncoder.hash of a chain of 4,000 struct types (160 KB)", `ethers.utils._TypedDataEncoder.hash({}, ${chain(4000)}, { n: [] })`, MEMORY],
      ["_TypedDataEncoder.hash of a chain of 300 struct types", `ethers.utils._TypedDataEncoder.hash({}, ${chain(300)}, { n: [] })`, /^RangeError: _TypedDataEncoder\.hash: typed data may define at most 256 struct types, got 300$/],
      ["verifyTypedData of a diamond of 30 layers (62 types, 2^30 paths)", `ethers.utils.verifyTypedData({}, ${diamond(30)}, {}, "0x" + "11".repeat(64) + "1b")`, MEMORY],
      ["_TypedDataEncoder.getPrimaryType of a diamond of 40 layers", `ethers.utils._TypedDataEncoder.getPrimaryType(${diamond(40)})`, MEMORY],
      ["wallet.signTypedData of 2,000 {} as a struct of 1,000 bool fields (no value needed)", `const S = []; for (let i = 0; i < 1000; i++) S.push({ name: "f" + i, type: "bool" });
        return await new ethers.Wallet("0x" + "11".repeat(32)).signTypedData({}, { T: [{ name: "a", type: "S[]" }], S }, { a: new Array(2000).fill({}) })`, MEMORY],
      // RLP: items and nesting.
      ["RLP.decode of a list of a million one-byte items (1 MB)", `ethers.utils.RLP.decode("0xfb000f4240" + "01".repeat(1000000))`, MEMORY],
      ["decodeRlp of lists nested 200 deep", `let d = "c0"; for (let i = 0; i < 200; i++) { const n = d.length / 2; d = (n <= 55 ? (0xc0 + n).toString(16) : n < 256 ? "f8" + n.toString(16).padStart(2, "0") : "f9" + n.toString(16).padStart(4, "0")) + d; } ethers.decodeRlp("0x" + d)`, /^RangeError: ethers\.decodeRlp: RLP data nests more than 128 lists deep$/],
      // Text: a normalization multiplies it.
      ["toUtf8CodePoints of a million U+FDFA in NFKC (18 characters each)", `ethers.toUtf8CodePoints("\\ufdfa".repeat(1000000), "NFKC")`, MEMORY],
      // Many values, each made a word and hexed a byte at a time.
      ["abiEncode of 500,000 numbers", `ethers.AbiCoder.defaultAbiCoder().encode(["uint256[]"], [new Array(500000).fill(1)])`, MEMORY],
      ["solidityPack of 500,000 numbers", `ethers.utils.solidityPack(["uint8[]"], [new Array(500000).fill(1)])`, MEMORY],
      ["new Interface of 50,000 human-readable functions", `const abi = []; for (let i = 0; i < 50000; i++) abi.push("function f" + i + "(uint256 a) returns (uint256)"); new ethers.utils.Interface(abi)`, MEMORY],
      ["parseUnits of a million digits", `ethers.parseUnits("1" + "0".repeat(1000000), 18)`, MEMORY],
      ["keccak256 of 3 MB", `ethers.keccak256(new Uint8Array(3 * 1024 * 1024))`, MEMORY],
      // An error that writes its huge argument into its message, a byte at a time.
      ["getCreate2Address with a 1.1 MB salt", `ethers.getCreate2Address("0x" + "11".repeat(20), new Uint8Array(1100 * 1024), "0x" + "00".repeat(32))`, MEMORY],
      // A transaction's access list: ethers' RLP encoding is quadratic in a list's items.
      ["signTransaction with 1,100 storage keys", `const keys = new Array(1100).fill("0x" + "00".repeat(32));
        return await new ethers.Wallet("0x" + "11".repeat(32)).signTransaction({ to: "0x" + "11".repeat(20), chainId: 1, type: 2, accessList: [{ address: "0x" + "11".repeat(20), storageKeys: keys }] })`,
        /^RangeError: wallet\.signTransaction: a transaction's access list may hold at most 1024 addresses and storage keys, got 1101$/],
    ];
    for (const [name, call, expected] of cases) {
      it(`${name}: refused cleanly`, async function () {
        const before = pool.stats();
        const started = Date.now();
        const r = await run(`${PRELUDE}\nasync function main() { try { ${call}; return "answered"; } catch (e) { return e.name + ": " + e.message; } }`);
        const ms = Date.now() - started;
        expect(r.response, JSON.stringify(r.error)).to.match(expected);
        // the action caught the refusal: the run does not fail for it (as on Chipotle, whose ops reject and the action may catch)
        expect([r.hasError, r.error], r.logs).to.deep.equal([false, undefined]);
        expect(ms, "well under the run's 20 s").to.be.below(5000);
        expect(pool.stats().replaced, "the sandbox process lives").to.equal(before.replaced);
        expect(pool.stats().started).to.equal(before.started);
      });
    }

    it("answers what fits, as ethers does: aliased data within the budget, a 1,000-word array, names, typed data, RLP", async function () {
      // EIP-712's example
      const domain = { name: "Ether Mail", version: "1", chainId: 1, verifyingContract: "0xCcCCccccCCCCcCCCCCCcCcCccCcCCCcCcccccccC" };
      const types = { Mail: [{ name: "from", type: "Person" }, { name: "to", type: "Person" }, { name: "contents", type: "string" }], Person: [{ name: "name", type: "string" }, { name: "wallet", type: "address" }] };
      const mail = { from: { name: "Cow", wallet: "0xCD2a3d9F938E13CD947Ec05AbC7FE734Df8DD826" }, to: { name: "Bob", wallet: "0xbBbBBBBbbBBBbbbBbbBbbbbBBbBbbbbBbBbbBBbB" }, contents: "Hello, Bob!" };
      const r = await run(`${PRELUDE}
        async function main() {
          const domain = ${JSON.stringify(domain)}, types = ${JSON.stringify(types)}, mail = ${JSON.stringify(mail)};
          return [
            coder.decode(["bytes[]"], aliasedBytes(8, 64))[0].length,
            coder.decode(["uint256[]"], "0x" + w(32) + w(1000) + w(7).repeat(1000))[0].length,
            ethers.utils.namehash("vitalik.eth"),
            ethers.dnsEncode("sub.vitalik.eth"),
            ethers.utils._TypedDataEncoder.hash(domain, types, mail),
            ethers.utils.RLP.decode(ethers.utils.RLP.encode(["0x01", ["0x0203", []]])),
            ethers.encodeRlp(new Array(20000).fill("0x" + "ab".repeat(32))).length,
          ];
        }`);
      expect(r.hasError, r.logs).to.equal(false);
      expect(r.response).to.deep.equal([
        8,
        1000,
        ethers.namehash("vitalik.eth"),
        ethers.dnsEncode("sub.vitalik.eth"),
        ethers.TypedDataEncoder.hash(domain, types, mail),
        ["0x01", ["0x0203", []]],
        2 + 2 * (4 + 20000 * 33), // 0xfa, three bytes of length, 20,000 items of 33 bytes (ethers' own encoder takes a minute)
      ]);
    });
  });

  describe("the counts, against ethers itself", function () {
    it("restores at most MAX_BIGINT_CHARS digits of bigints per call, refused before V8 reads them (8 M digits took 5 s)", function () {
      const big = (n: number) => JSON.stringify({ $bigint: "9".repeat(n) });
      expect(decodeTagged(`[${big(1000)}]`)).to.deep.equal([BigInt("9".repeat(1000))]);
      const started = performance.now();
      expect(() => decodeTagged(`[${big(MAX_BIGINT_CHARS + 1)}]`)).to.throw(RangeError, /at most 1048576 digits of bigints/);
      expect(() => decodeTagged(`[${Array.from({ length: 3 }, () => big(MAX_BIGINT_CHARS / 2)).join(",")}]`)).to.throw(RangeError); // in all, not each
      expect(performance.now() - started).to.be.below(1000);
    });

    it("the decode walk ends where ethers' decode ends, on valid, corrupted and truncated data", function () {
      const rnd = random(7);
      const pick = <T>(items: T[]) => items[Math.floor(rnd() * items.length)];
      const typeOf = (depth: number): string => {
        const r = rnd();
        if (depth > 3 || r < 0.45) return pick(["uint256", "uint8", "int16", "bool", "address", "bytes32", "bytes4", "bytes", "string"]);
        if (r < 0.75) return typeOf(depth + 1) + (rnd() < 0.5 ? "[]" : `[${1 + Math.floor(rnd() * 3)}]`);
        return "(" + Array.from({ length: 1 + Math.floor(rnd() * 3) }, () => typeOf(depth + 1)).join(",") + ")";
      };
      const valueOf = (t: ethers.ParamType): unknown => {
        if (t.isArray()) return Array.from({ length: t.arrayLength >= 0 ? t.arrayLength : Math.floor(rnd() * 4) }, () => valueOf(t.arrayChildren));
        if (t.isTuple()) return t.components.map(valueOf);
        if (t.type === "address") return ethers.ZeroAddress;
        if (t.type === "bool") return rnd() < 0.5;
        if (t.type === "string") return "x".repeat(Math.floor(rnd() * 40));
        if (t.type === "bytes") return ethers.hexlify(new Uint8Array(Math.floor(rnd() * 70)));
        const fixed = /^bytes(\d+)$/.exec(t.type);
        return fixed ? ethers.hexlify(new Uint8Array(Number(fixed[1]))) : t.type.startsWith("int") ? -1 : 1;
      };
      const coder = ethers.AbiCoder.defaultAbiCoder();
      let failing = 0;
      for (let i = 0; i < 1500; i++) {
        const types = Array.from({ length: 1 + Math.floor(rnd() * 3) }, () => ethers.ParamType.from(typeOf(0)));
        let data = ethers.getBytes(coder.encode(types, types.map(valueOf)));
        const m = rnd();
        if (m < 0.3 && data.length > 0) {
          data = data.slice();
          for (let k = 0; k < 3; k++) {
            const at = 32 * Math.floor(rnd() * (data.length / 32));
            const v = pick([0, 32, 64, 96, 32 * Math.floor(rnd() * 10), 2 ** 31, 255]);
            data.fill(0, at, at + 32);
            for (let b = 0; b < 4; b++) data[at + 31 - b] = (v >>> (8 * b)) & 255;
            if (rnd() < 0.1) data[at] = 1; // past 2^53
          }
        } else if (m < 0.4) data = data.slice(0, Math.floor(rnd() * data.length));
        const loose = rnd() < 0.3;
        let fails = false;
        try {
          coder.decode(types, data, loose);
        } catch {
          fails = true;
        }
        failing += fails ? 1 : 0;
        expect(decodeCounts(types, data, loose, () => 0, 1)?.fails, `${types.map((t) => t.format()).join(",")} over ${ethers.hexlify(data)}`).to.equal(fails);
      }
      expect(failing, "some of them fail").to.be.above(100);
    });

    it("counts what aliased offsets make: every entry's copy of the payload", function () {
      const w = (n: number) => n.toString(16).padStart(64, "0");
      const data = ethers.getBytes("0x" + w(32) + w(100) + w(32 * 100).repeat(100) + w(1000) + "ab".repeat(1000) + "00".repeat(24));
      const counts = decodeCounts([ethers.ParamType.from("bytes[]")], data, false, () => 0, 1)!;
      expect(counts.bytes).to.equal(100 * 1000);
      expect(counts.values).to.equal(1 + 1 + 100 + 1); // the outer Result and its value, the array's 100 and its Result
      expect(ethers.AbiCoder.defaultAbiCoder().decode(["bytes[]"], data)[0].length).to.equal(100);
    });

    it("encodeRlp answers ethers' bytes and errors, in one pass", function () {
      const rnd = random(11);
      const item = (depth: number): unknown =>
        depth > 3 || rnd() < 0.5
          ? ethers.hexlify(new Uint8Array(Math.floor(rnd() * (rnd() < 0.8 ? 60 : 700))).map(() => Math.floor(rnd() * (rnd() < 0.5 ? 128 : 256))))
          : Array.from({ length: depth === 0 && rnd() < 0.3 ? 200 : Math.floor(rnd() * 4) }, () => item(depth + 1));
      const samples = [[], "0x", "0x00", "0x7f", "0x80", [[]], ["0x"], "0x" + "aa".repeat(55), "0x" + "aa".repeat(56), "0x" + "aa".repeat(256), "0x" + "aa".repeat(70000)];
      for (let i = 0; i < 200; i++) samples.push(item(0) as never);
      for (const v of samples) expect(JSON.parse(callEthers("encodeRlp", JSON.stringify([v]), DEFAULT_LIMITS))).to.equal(ethers.encodeRlp(v as ethers.RlpStructuredDataish));
      for (const bad of [123, "0x1", "abc", [1], { a: 1 }, null]) {
        expect(() => callEthers("encodeRlp", JSON.stringify([bad]), DEFAULT_LIMITS)).to.throw("ethers.encodeRlp: invalid BytesLike value (code=INVALID_ARGUMENT)");
      }
    });
  });

  describe("a call within its budget ends in well under a second (the run's deadline holds: a call cannot be interrupted)", function () {
    const cpuMs = (fn: () => void) => {
      const start = process.cpuUsage();
      fn();
      const used = process.cpuUsage(start);
      return (used.user + used.system) / 1000;
    };
    /** Whether the bounds let the call through: checked on its arguments, or (a decode, whose cost is in its data) run. */
    const fits = (name: string, args: unknown[]) => {
      try {
        if (/decode/i.test(name)) callEthers(name, JSON.stringify(args), DEFAULT_LIMITS);
        else checkEthersCall(name, decodeTagged(JSON.stringify(args)) as unknown[], DEFAULT_LIMITS);
        return true;
      } catch (err) {
        return !/memory limit/.test((err as Error).message);
      }
    };
    /** The largest n (to within 1/8) whose input the bounds let through. */
    const largest = (name: string, make: (n: number) => unknown[]) => {
      let low = 1;
      while (fits(name, make(low * 2))) low *= 2;
      let step = low / 2;
      while (step >= Math.max(1, low / 8)) {
        if (fits(name, make(low + step))) low += step;
        step /= 2;
      }
      return low;
    };
    const call = (name: string, json: string) => {
      try {
        callEthers(name, json, DEFAULT_LIMITS);
      } catch (err) {
        if (/memory limit/.test((err as Error).message)) throw err; // an error of ethers' own is fine: it came after its work
      }
    };
    const w = (n: number) => n.toString(16).padStart(64, "0");
    const hex = (n: number) => ({ $bytes: "0x" + "ab".repeat(n) });
    // The slowest input of each kind of work, as the bounds were measured (ethers-bounds.ts WORK).
    const shapes: [string, string, (n: number) => unknown[]][] = [
      ["a flat uint256[] decode (ethers copies the data a word)", "abiDecode5", (n) => [["uint256[]"], { $bytes: "0x" + w(32) + w(n) + w(7).repeat(n) }, false]],
      ["an aliased bytes[] decode", "abiDecode", (n) => [["bytes[]"], { $bytes: "0x" + w(32) + w(64) + w(32 * 64).repeat(64) + w(n) + "ab".repeat(n) + "00".repeat((32 - (n % 32)) % 32) }]],
      ["an aliased uint256[][] decode", "abiDecode", (n) => [["uint256[][]"], { $bytes: "0x" + w(32) + w(n) + w(32 * n).repeat(n) + w(n) + w(1).repeat(n) }]],
      ["abiEncode of string[]", "abiEncode", (n) => [["string[]"], [Array.from({ length: n }, () => "")]]],
      ["solidityPacked of uint8[]", "solidityPacked", (n) => [["uint8[]"], [Array.from({ length: n }, () => 1)]]],
      ["keccak256", "keccak256", (n) => [hex(n)]],
      ["hashMessage of text", "hashMessage", (n) => ["é".repeat(n)]],
      ["a transaction's data", "signTransaction", (n) => ["0x" + "11".repeat(32), { to: "0x" + "11".repeat(20), chainId: 1, data: hex(n) }]],
      ["typed data of string[]", "typedDataHash", (n) => [{}, { T: [{ name: "a", type: "string[]" }] }, { a: Array.from({ length: n }, () => "") }]],
      ["decodeRlp of one-byte items", "decodeRlp", (n) => [{ $bytes: "0xfb" + n.toString(16).padStart(8, "0") + "01".repeat(n) }]],
      ["new Interface of human-readable functions", "abiParse5", (n) => [Array.from({ length: n }, (_, i) => `function f${i}(uint256 a, address b) returns (bytes)`)]],
      ["an error that writes 1 MB of bytes (a wrong salt)", "getCreate2Address", (n) => ["0x" + "11".repeat(20), hex(n), hex(32)]],
    ];
    for (const [label, name, make] of shapes) {
      it(`${label}: at the most the budget allows`, function () {
        const n = largest(name, make);
        const json = JSON.stringify(make(n));
        call(name, JSON.stringify(make(Math.max(1, Math.floor(n / 64))))); // warm the code up
        const ms = cpuMs(() => call(name, json));
        expect(ms, `${name} of n = ${n}`).to.be.below(1000);
      });
    }
  });
});
