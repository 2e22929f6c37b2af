/**
 * The sandbox's ethers v5 surface against the real ethers v5 (the @ethersproject 5.x packages that
 * Hardhat brings): the same calls, the same answers (BigNumber hex shapes, Results with their names,
 * signature objects, transactions), the same error codes; and what one call may cost the sandbox
 * process (huge ABIs, deep types, huge numbers).
 */
import { expect } from "chai";
import { AbiCoder as AbiCoder5, Interface as Interface5 } from "@ethersproject/abi";
import { getAddress, getContractAddress, getCreate2Address, isAddress } from "@ethersproject/address";
import { decode as b64decode, encode as b64encode } from "@ethersproject/base64";
import { BigNumber, FixedNumber } from "@ethersproject/bignumber";
import { Logger } from "@ethersproject/logger";
import * as bytes5 from "@ethersproject/bytes";
import { formatBytes32String } from "@ethersproject/strings";
import { _TypedDataEncoder, hashMessage, id, namehash } from "@ethersproject/hash";
import { keccak256 } from "@ethersproject/keccak256";
import * as RLP from "@ethersproject/rlp";
import { computePublicKey, recoverPublicKey, SigningKey } from "@ethersproject/signing-key";
import { toUtf8Bytes, toUtf8String } from "@ethersproject/strings";
import { computeAddress, parse as parseTransaction, recoverAddress, serialize as serializeTransaction } from "@ethersproject/transactions";
import { commify, formatEther, formatUnits, parseEther, parseUnits } from "@ethersproject/units";
import { ethers as ethers6 } from "ethers";
import { SandboxPool } from "../executor/sandbox/host/pool";
import { DEFAULT_LIMITS, type Host, type RunLimits } from "../executor/sandbox/types";

const KEY = `0x${"42".repeat(32)}`;
const ADDRESS = "0x1111111111111111111111111111111111111111";

/** JSON of a value with each array's named members shown (a v5 Result), BigNumbers as v5 writes them. */
const SHAPE = `function shape(v) {
  if (Array.isArray(v)) { const names = Object.keys(v).filter((k) => !/^\\d+$/.test(k)); return { items: v.map(shape), names: names.map((n) => [n, shape(v[n])]) }; }
  if (v instanceof Uint8Array) return { bytes: Array.from(v) };
  if (v && typeof v === "object" && !v._isBigNumber) { const o = {}; for (const k of Object.keys(v)) if (typeof v[k] !== "function") o[k] = shape(v[k]); return o; }
  return v && v._isBigNumber ? { bn: v._hex } : v;
}`;
// eslint-disable-next-line @typescript-eslint/no-implied-eval
const shape = new Function(`${SHAPE}; return shape;`)() as (v: unknown) => unknown;
/** A v5 error as the tests compare it. */
const failure = (fn: () => unknown) => {
  try {
    fn();
    return "no error";
  } catch (e) {
    const err = e as { code?: string; reason?: string; fault?: string };
    return [err.code, err.reason, err.fault ?? null];
  }
};
const FAILURE = `const failure = (fn) => { try { fn(); return "no error"; } catch (e) { return [e.code, e.reason, e.fault ?? null]; } };`;

describe("ethers v5 in the sandbox, against the real ethers v5", function () {
  this.timeout(60_000);
  let pool: SandboxPool;
  const host: Host = async () => {
    throw new Error("no host calls here");
  };
  const run = async (body: string, overrides: Partial<RunLimits> = {}) => {
    const code = `${SHAPE}\n${FAILURE}\nasync function main() { const e = ethers, u = ethers.utils, B = ethers.BigNumber; ${body} }`;
    const limits = { ...DEFAULT_LIMITS, timeoutMs: 20_000, ...overrides };
    return pool.run({ code: Buffer.from(code), ipfsId: "QmV5", paramsJson: "{}", limits }, host);
  };
  const same = async (body: string, expected: unknown) => {
    const r = await run(body);
    expect(r.hasError, r.logs).to.equal(false);
    expect(r.response).to.deep.equal(JSON.parse(JSON.stringify(expected)));
  };

  before(async () => {
    pool = new SandboxPool({ size: 1 });
    await run("return 1");
  });
  after(() => pool.close());

  it("BigNumber: from every input v5 takes, its arithmetic, comparisons and hex shapes", async () => {
    const inputs = [0, 1, -1, 255, "0x00ff", "0xABCD", "-0x0a", "123456789012345678901234567890", "-42", [1, 2], { _hex: "0x05" }, { type: "BigNumber", hex: "0x06" }, 2 ** 52, 2 ** 53 - 2];
    const ops = (a: BigNumber, b: BigNumber) => [a.add(b), a.sub(b), a.mul(b), a.abs(), a.isZero() ? null : b.div(a), a.eq(b), a.lt(b), a.lte(b), a.gt(b), a.gte(b), a.isNegative(), a.toString(), a.toHexString(), a.toJSON()];
    const inGuest = `(a, b) => [a.add(b), a.sub(b), a.mul(b), a.abs(), a.isZero() ? null : b.div(a), a.eq(b), a.lt(b), a.lte(b), a.gt(b), a.gte(b), a.isNegative(), a.toString(), a.toHexString(), a.toJSON()]`;
    const seven = BigNumber.from(7);
    await same(
      `const ops = ${inGuest}; const seven = B.from(7), big = B.from("0x" + "f".repeat(64));
       return shape(${JSON.stringify(inputs)}.map((v) => ops(B.from(v), seven)).concat([
         [seven.pow(40), seven.mod(3), B.from(-7).mod(3), big.and(0xff), big.or(1), seven.xor(2), big.mask(8), seven.shl(200), big.shr(250), B.from(-1).toTwos(8), B.from(255).fromTwos(8), B.from(200).toTwos(256), B.from(2).pow(52).toNumber(), B.from(2n ** 80n)],
         [B.isBigNumber(seven), B.isBigNumber({ _hex: "0x01" }), B.isBigNumber(7), JSON.stringify({ v: seven })]]));`,
      shape(
        inputs.map((v) => ops(BigNumber.from(v), seven)).concat([
          [seven.pow(40), seven.mod(3), BigNumber.from(-7).mod(3), BigNumber.from("0x" + "f".repeat(64)).and(0xff), BigNumber.from("0x" + "f".repeat(64)).or(1), seven.xor(2), BigNumber.from("0x" + "f".repeat(64)).mask(8), seven.shl(200), BigNumber.from("0x" + "f".repeat(64)).shr(250), BigNumber.from(-1).toTwos(8), BigNumber.from(255).fromTwos(8), BigNumber.from(200).toTwos(256), BigNumber.from(2).pow(52).toNumber(), BigNumber.from((2n ** 80n).toString())] as unknown[],
          [BigNumber.isBigNumber(seven), BigNumber.isBigNumber({ _hex: "0x01" }), BigNumber.isBigNumber(7), JSON.stringify({ v: seven })],
        ]),
      ),
    );
  });

  it("BigNumber: the same faults (code, reason, fault) as v5", async () => {
    const cases = [
      () => BigNumber.from(1.5), () => BigNumber.from(2 ** 53), () => BigNumber.from("12abc"), () => BigNumber.from(null), () => BigNumber.from(1).div(0), () => BigNumber.from(1).mod(-1),
      () => BigNumber.from(2).pow(-1), () => BigNumber.from(-1).and(1), () => BigNumber.from(1).shl(-1), () => BigNumber.from("0x" + "f".repeat(20)).toNumber(), () => (BigNumber.prototype.toString as (radix: number) => string).call(BigNumber.from(1), 16),
    ];
    await same(
      `return [() => B.from(1.5), () => B.from(2 ** 53), () => B.from("12abc"), () => B.from(null), () => B.from(1).div(0), () => B.from(1).mod(-1),
        () => B.from(2).pow(-1), () => B.from(-1).and(1), () => B.from(1).shl(-1), () => B.from("0x" + "f".repeat(20)).toNumber(), () => B.from(1).toString(16)].map(failure);`,
      cases.map(failure),
    );
  });

  it("utils' bytes helpers and signatures answer v5's shapes and errors", async () => {
    const sig = new SigningKey(KEY).signDigest(keccak256("0x1234"));
    const compact = bytes5.splitSignature(sig).compact;
    const expected = {
      arrayify: [bytes5.arrayify(258), bytes5.arrayify("0x0102"), bytes5.arrayify([3, 4]), bytes5.arrayify("0x123", { hexPad: "left" }), bytes5.arrayify("abcd", { allowMissingPrefix: true }), bytes5.arrayify(BigNumber.from(9))],
      hexlify: [bytes5.hexlify(5), bytes5.hexlify(0), bytes5.hexlify(4096), bytes5.hexlify(BigInt(300)), bytes5.hexlify(BigNumber.from(17)), bytes5.hexlify([255, 1]), bytes5.hexlify("0xABC", { hexPad: "right" }), bytes5.hexlify("0xAB")],
      checks: [bytes5.isBytesLike("0x12"), bytes5.isBytesLike("0x123"), bytes5.isBytes([1, 300]), bytes5.isHexString("0x1234", 2), bytes5.isHexString("0x1234", 3)],
      more: [bytes5.concat(["0x01", [2], new Uint8Array([3])]), bytes5.stripZeros("0x000102"), bytes5.zeroPad("0x0102", 4), bytes5.hexDataLength("0x010203"), bytes5.hexDataLength("0x123"), bytes5.hexDataSlice("0x01020304", 1, 3), bytes5.hexConcat(["0x01", [2]]), bytes5.hexValue("0x0007"), bytes5.hexValue(0), bytes5.hexStripZeros("0x000abc"), bytes5.hexZeroPad("0x1", 3)],
      split: [bytes5.splitSignature(sig), bytes5.splitSignature(compact), bytes5.splitSignature({ r: sig.r, s: sig.s, v: sig.v }), bytes5.splitSignature({ r: sig.r, _vs: sig._vs })],
      joined: [bytes5.joinSignature(sig), bytes5.joinSignature(compact), bytes5.joinSignature({ r: sig.r, s: sig.s, recoveryParam: sig.recoveryParam })],
      errors: [() => bytes5.arrayify("0x123"), () => bytes5.hexlify("nothex"), () => bytes5.zeroPad("0x010203", 2), () => bytes5.hexZeroPad("0x010203", 2), () => bytes5.splitSignature("0x1234"), () => bytes5.arrayify(-1)].map(failure),
    };
    await same(
      `const sig = new u.SigningKey("${KEY}").signDigest(u.keccak256("0x1234")); const compact = u.splitSignature(sig).compact;
       return shape({
        arrayify: [u.arrayify(258), u.arrayify("0x0102"), u.arrayify([3, 4]), u.arrayify("0x123", { hexPad: "left" }), u.arrayify("abcd", { allowMissingPrefix: true }), u.arrayify(B.from(9))],
        hexlify: [u.hexlify(5), u.hexlify(0), u.hexlify(4096), u.hexlify(300n), u.hexlify(B.from(17)), u.hexlify([255, 1]), u.hexlify("0xABC", { hexPad: "right" }), u.hexlify("0xAB")],
        checks: [u.isBytesLike("0x12"), u.isBytesLike("0x123"), u.isBytes([1, 300]), u.isHexString("0x1234", 2), u.isHexString("0x1234", 3)],
        more: [u.concat(["0x01", [2], new Uint8Array([3])]), u.stripZeros("0x000102"), u.zeroPad("0x0102", 4), u.hexDataLength("0x010203"), u.hexDataLength("0x123"), u.hexDataSlice("0x01020304", 1, 3), u.hexConcat(["0x01", [2]]), u.hexValue("0x0007"), u.hexValue(0), u.hexStripZeros("0x000abc"), u.hexZeroPad("0x1", 3)],
        split: [u.splitSignature(sig), u.splitSignature(compact), u.splitSignature({ r: sig.r, s: sig.s, v: sig.v }), u.splitSignature({ r: sig.r, _vs: sig._vs })],
        joined: [u.joinSignature(sig), u.joinSignature(compact), u.joinSignature({ r: sig.r, s: sig.s, recoveryParam: sig.recoveryParam })],
        errors: [() => u.arrayify("0x123"), () => u.hexlify("nothex"), () => u.zeroPad("0x010203", 2), () => u.hexZeroPad("0x010203", 2), () => u.splitSignature("0x1234"), () => u.arrayify(-1)].map(failure),
       });`,
      shape(expected),
    );
  });

  it("units, hashing, addresses, strings, RLP, base64 and keys answer what v5 answers", async () => {
    const key = new SigningKey(KEY);
    const digest = keccak256("0xabcdef");
    const sig = key.signDigest(digest);
    const domain = { name: "Vesta", version: "1", chainId: 1, verifyingContract: ADDRESS };
    const types = { Mail: [{ name: "to", type: "address" }, { name: "contents", type: "string" }] };
    const mail = { to: ADDRESS, contents: "hi" };
    const expected = {
      units: [formatUnits(BigNumber.from("1234567890123456789"), 18), formatUnits(12345, 2), formatUnits("1000000000", "gwei"), formatEther(-1), parseUnits("1.5", "gwei"), parseEther("-0.1"), parseUnits("42", 0), commify("-1234567.8900"), commify("0.0")],
      unitErrors: [() => parseUnits("1.0000001", 6), () => parseUnits(5 as never), () => formatUnits(1, 300), () => parseEther("1.2.3")].map(failure),
      hashes: [id("transfer(address,uint256)"), hashMessage("hello"), hashMessage([1, 2, 3]), namehash("vitalik.eth"), keccak256([1, 2]), _TypedDataEncoder.hash(domain, types, mail), _TypedDataEncoder.hashDomain(domain), formatBytes32String("vesta")],
      addresses: [getAddress(ADDRESS.toUpperCase().replace("0X", "0x")), isAddress("0x12"), getContractAddress({ from: ADDRESS, nonce: 7 }), getCreate2Address(ADDRESS, keccak256("0x01"), keccak256("0x02")), computeAddress(key.publicKey), recoverAddress(digest, sig)],
      keys: [key.publicKey, key.compressedPublicKey, computePublicKey(key.publicKey, true), recoverPublicKey(digest, sig), key.signDigest(digest)],
      strings: [toUtf8Bytes("héllo ✓"), toUtf8String([0x68, 0xc3, 0xa9]), RLP.encode(["0x01", ["0x0203", "0x"]]), RLP.decode(RLP.encode([["0x05"], "0x0607"])), b64encode([1, 2, 3, 250]), b64decode("AQID+g==")],
    };
    await same(
      `const key = new u.SigningKey("${KEY}"); const digest = u.keccak256("0xabcdef"); const sig = key.signDigest(digest);
       const domain = ${JSON.stringify(domain)}, types = ${JSON.stringify(types)}, mail = ${JSON.stringify(mail)};
       return shape({
        units: [u.formatUnits(B.from("1234567890123456789"), 18), u.formatUnits(12345, 2), u.formatUnits("1000000000", "gwei"), u.formatEther(-1), u.parseUnits("1.5", "gwei"), u.parseEther("-0.1"), u.parseUnits("42", 0), u.commify("-1234567.8900"), u.commify("0.0")],
        unitErrors: [() => u.parseUnits("1.0000001", 6), () => u.parseUnits(5), () => u.formatUnits(1, 300), () => u.parseEther("1.2.3")].map(failure),
        hashes: [u.id("transfer(address,uint256)"), u.hashMessage("hello"), u.hashMessage([1, 2, 3]), u.namehash("vitalik.eth"), u.keccak256([1, 2]), u._TypedDataEncoder.hash(domain, types, mail), u._TypedDataEncoder.hashDomain(domain), u.formatBytes32String("vesta")],
        addresses: [u.getAddress("${ADDRESS.toUpperCase().replace("0X", "0x")}"), u.isAddress("0x12"), u.getContractAddress({ from: "${ADDRESS}", nonce: 7 }), u.getCreate2Address("${ADDRESS}", u.keccak256("0x01"), u.keccak256("0x02")), u.computeAddress(key.publicKey), u.recoverAddress(digest, sig)],
        keys: [key.publicKey, key.compressedPublicKey, u.computePublicKey(key.publicKey, true), u.recoverPublicKey(digest, sig), key.signDigest(digest)],
        strings: [u.toUtf8Bytes("héllo ✓"), u.toUtf8String([0x68, 0xc3, 0xa9]), u.RLP.encode(["0x01", ["0x0203", "0x"]]), u.RLP.decode(u.RLP.encode([["0x05"], "0x0607"])), u.base64.encode([1, 2, 3, 250]), u.base64.decode("AQID+g==")],
       });`,
      shape(expected),
    );
  });

  it("transactions: serializeTransaction and parseTransaction as v5, for legacy, EIP-155, EIP-2930 and EIP-1559", async () => {
    const key = new SigningKey(KEY);
    const txs = [
      { to: ADDRESS, nonce: 3, gasLimit: 21000, gasPrice: BigNumber.from(10), value: BigNumber.from(5), data: "0x", chainId: 1 },
      { to: ADDRESS, nonce: 0, gasLimit: "0x5208", gasPrice: 1, value: 0 },
      { type: 1, to: ADDRESS, nonce: 1, gasLimit: 30000, gasPrice: 7, value: 1, data: "0x1234", chainId: 5, accessList: [{ address: ADDRESS, storageKeys: [keccak256("0x01")] }] },
      { type: 2, to: ADDRESS, nonce: 9, gasLimit: 50000, maxFeePerGas: "1000000000", maxPriorityFeePerGas: 100, value: parseEther("0.5"), data: "0xabcdef", chainId: 8453 },
      { type: 2, nonce: 1, gasLimit: 100000, maxFeePerGas: 2, maxPriorityFeePerGas: 1, data: "0x6000", chainId: 31337 },
    ];
    const signed = txs.map((tx) => serializeTransaction(tx as never, key.signDigest(keccak256(serializeTransaction(tx as never)))));
    const expected = { unsigned: txs.map((tx) => serializeTransaction(tx as never)), signed, parsed: signed.map((s) => parseTransaction(s)), unsignedParsed: parseTransaction(serializeTransaction(txs[3] as never)), errors: [() => serializeTransaction({ from: ADDRESS } as never), () => serializeTransaction({ type: 3 } as never), () => parseTransaction("0x05")].map(failure) };
    const inGuest = JSON.stringify(txs, (k, v) => (v && v.type === "BigNumber" ? `@bn:${v.hex}` : v));
    await same(
      `const key = new u.SigningKey("${KEY}");
       const txs = JSON.parse(${JSON.stringify(inGuest)}, (k, v) => (typeof v === "string" && v.startsWith("@bn:") ? B.from(v.slice(4)) : v));
       const signed = txs.map((tx) => u.serializeTransaction(tx, key.signDigest(u.keccak256(u.serializeTransaction(tx)))));
       return shape({ unsigned: txs.map((tx) => u.serializeTransaction(tx)), signed, parsed: signed.map((s) => u.parseTransaction(s)), unsignedParsed: u.parseTransaction(u.serializeTransaction(txs[3])),
         errors: [() => u.serializeTransaction({ from: "${ADDRESS}" }), () => u.serializeTransaction({ type: 3 }), () => u.parseTransaction("0x05")].map(failure) });`,
      shape(expected),
    );
  });

  it("a Wallet signs an untyped transaction with gasPrice as legacy, as v5's Wallet does", async () => {
    const tx = { to: ADDRESS, value: 5, nonce: 1, gasLimit: 21000, gasPrice: 1000000000, chainId: 1 };
    const key = new SigningKey(KEY);
    const expected = serializeTransaction(tx, key.signDigest(keccak256(serializeTransaction(tx))));
    await same(`return await new e.Wallet("${KEY}").signTransaction(${JSON.stringify(tx)});`, expected);
  });

  it("the ABI: defaultAbiCoder and Interface answer v5's Results (names, numbers up to 48 bits, BigNumber above) and its reverts", async () => {
    const coder = new AbiCoder5();
    const types = ["uint8 small", "uint48 edge", "uint64 wide", "int256 neg", "address who", "bytes data", "bytes4 sel", "string text", "bool ok", "tuple(uint256 a, string[] b) t", "uint16[2] pair", "uint256 length"];
    const values = [7, 2 ** 40, "18446744073709551615", -5, ADDRESS, "0x1234", "0xdeadbeef", "héllo", true, [9, ["x", "y"]], [1, 2], 3];
    const encoded = coder.encode(types, values);
    const abi = [
      "function transfer(address to, uint256 amount) returns (bool)",
      "function get(uint256 id) view returns (uint256 amount, address owner)",
      "function get(string name) view returns (uint256)",
      "event Transfer(address indexed from, address indexed to, uint256 value)",
      "event Note(string indexed topic, bytes data)",
      "error Nope(uint256 code, string why)",
      "constructor(uint256 supply)",
    ];
    const iface = new Interface5(abi);
    const log = iface.encodeEventLog(iface.getEvent("Transfer"), [ADDRESS, ADDRESS, 5]);
    const note = iface.encodeEventLog(iface.getEvent("Note"), ["hello", "0xff"]);
    const getById = iface.getFunction("get(uint256)");
    const revert = (data: string) => failure(() => iface.decodeFunctionResult(getById, data));
    const reasonData = "0x08c379a0" + new AbiCoder5().encode(["string"], ["no way"]).slice(2);
    const customData = iface.encodeErrorResult("Nope", [4, "because"]);
    const expected = {
      decoded: coder.decode(types, encoded),
      encoded,
      iface: [
        iface.getSighash("transfer"), iface.encodeFunctionData("transfer", [ADDRESS, 1]), iface.encodeFunctionData("get(string)", ["x"]), iface.getEventTopic("Transfer"), Object.keys(iface.functions), Object.keys(iface.events), Object.keys(iface.errors),
        iface.decodeFunctionResult(getById, coder.encode(["uint256", "address"], [5, ADDRESS])), iface.decodeFunctionData("transfer", iface.encodeFunctionData("transfer", [ADDRESS, 2])), iface.encodeDeploy([100]),
        iface.format("full"), iface.encodeFilterTopics("Transfer", [null, ADDRESS]),
      ],
      log: [iface.parseLog(log).args, iface.parseLog(log).name, iface.parseLog(note).args, iface.parseTransaction({ data: iface.encodeFunctionData("transfer", [ADDRESS, 2]), value: 1 }).args],
      reverts: [revert(reasonData), revert(customData), revert("0x"), failure(() => iface.getFunction("get")), failure(() => iface.getFunction("nothing"))],
      revertDetails: [reasonData, customData].map((d) => {
        try {
          iface.decodeFunctionResult(getById, d);
          return null;
        } catch (e) {
          const err = e as { errorName: string; errorSignature: string; errorArgs: unknown; method: string };
          return [err.errorName, err.errorSignature, err.errorArgs, err.method];
        }
      }),
    };
    await same(
      `const coder = u.defaultAbiCoder; const types = ${JSON.stringify(types)}; const values = ${JSON.stringify(values)};
       const encoded = coder.encode(types, values);
       const iface = new u.Interface(${JSON.stringify(abi)});
       const log = iface.encodeEventLog(iface.getEvent("Transfer"), ["${ADDRESS}", "${ADDRESS}", 5]);
       const note = iface.encodeEventLog(iface.getEvent("Note"), ["hello", "0xff"]);
       const getById = iface.getFunction("get(uint256)");
       const revert = (data) => failure(() => iface.decodeFunctionResult(getById, data));
       const reasonData = "0x08c379a0" + coder.encode(["string"], ["no way"]).slice(2);
       const customData = iface.encodeErrorResult("Nope", [4, "because"]);
       return shape({
        decoded: coder.decode(types, encoded), encoded,
        iface: [iface.getSighash("transfer"), iface.encodeFunctionData("transfer", ["${ADDRESS}", 1]), iface.encodeFunctionData("get(string)", ["x"]), iface.getEventTopic("Transfer"), Object.keys(iface.functions), Object.keys(iface.events), Object.keys(iface.errors),
          iface.decodeFunctionResult(getById, coder.encode(["uint256", "address"], [5, "${ADDRESS}"])), iface.decodeFunctionData("transfer", iface.encodeFunctionData("transfer", ["${ADDRESS}", 2])), iface.encodeDeploy([100]),
          iface.format("full"), iface.encodeFilterTopics("Transfer", [null, "${ADDRESS}"])],
        log: [iface.parseLog(log).args, iface.parseLog(log).name, iface.parseLog(note).args, iface.parseTransaction({ data: iface.encodeFunctionData("transfer", ["${ADDRESS}", 2]), value: 1 }).args],
        reverts: [revert(reasonData), revert(customData), revert("0x"), failure(() => iface.getFunction("get")), failure(() => iface.getFunction("nothing"))],
        revertDetails: [reasonData, customData].map((d) => { try { iface.decodeFunctionResult(getById, d); return null; } catch (e) { return [e.errorName, e.errorSignature, e.errorArgs, e.method]; } }),
       });`,
      shape(expected),
    );
  });

  it("the v6 surface stays as it was: top-level functions answer bigint, and take v5 BigNumbers", async () => {
    await same(
      `return shape([typeof e.parseEther("1"), e.formatEther(B.from("1500000000000000000")), e.toBigInt(B.from(7)) === 7n, typeof e.keccak256("0x01"), e.ZeroAddress, e.constants.AddressZero, e.MaxUint256 === (1n << 256n) - 1n, e.constants.MaxUint256.toHexString()]);`,
      shape(["bigint", "1.5", true, "string", ethers6.ZeroAddress, ethers6.ZeroAddress, true, "0x" + "f".repeat(64)]),
    );
  });

  it("randomBytes answers the length asked for, or refuses it (never fewer bytes: a short key would pass unnoticed)", async () => {
    const r = await run(`return [e.randomBytes(2048).length, u.randomBytes(32).length, failure(() => e.randomBytes(65537)), failure(() => u.randomBytes(1.5))];`);
    expect(r.hasError, r.logs).to.equal(false);
    expect(r.response).to.deep.equal([2048, 32, [null, null, null], [null, null, null]]);
    const refused = await run(`try { e.randomBytes(65537); } catch (x) { return x.name + ": " + x.message; }`);
    expect(refused.response).to.equal("RangeError: ethers.randomBytes: randomBytes: the length must be an integer from 0 to 65536, got 65537");
  });

  describe("ethers v5's whole public surface: each name there, what the sandbox lacks a clear error naming the alternative", function () {
    // The runtime exports of ethers 5.8.0 (lib/ethers.js, lib/utils.js) and @ethersproject/providers 5.8.0 (lib/index.js).
    const TOP = ["BaseContract", "BigNumber", "Contract", "ContractFactory", "FixedNumber", "Signer", "VoidSigner", "Wallet", "Wordlist", "constants", "errors", "getDefaultProvider", "logger", "providers", "utils", "version", "wordlists"];
    const UTILS = [
      "AbiCoder", "ConstructorFragment", "ErrorFragment", "EventFragment", "FormatTypes", "Fragment", "FunctionFragment", "HDNode", "Indexed", "Interface", "LogDescription", "Logger", "ParamType", "RLP", "SigningKey",
      "SupportedAlgorithm", "TransactionDescription", "TransactionTypes", "UnicodeNormalizationForm", "Utf8ErrorFuncs", "Utf8ErrorReason", "_TypedDataEncoder", "_fetchData", "_toEscapedUtf8String", "accessListify",
      "arrayify", "base58", "base64", "checkProperties", "checkResultErrors", "commify", "computeAddress", "computeHmac", "computePublicKey", "concat", "deepCopy", "defaultAbiCoder", "defaultPath", "defineReadOnly",
      "dnsEncode", "entropyToMnemonic", "fetchJson", "formatBytes32String", "formatEther", "formatUnits", "getAccountPath", "getAddress", "getContractAddress", "getCreate2Address", "getIcapAddress",
      "getJsonWalletAddress", "getStatic", "hashMessage", "hexConcat", "hexDataLength", "hexDataSlice", "hexStripZeros", "hexValue", "hexZeroPad", "hexlify", "id", "isAddress", "isBytes", "isBytesLike",
      "isHexString", "isValidMnemonic", "isValidName", "joinSignature", "keccak256", "mnemonicToEntropy", "mnemonicToSeed", "namehash", "nameprep", "parseBytes32String", "parseEther", "parseTransaction",
      "parseUnits", "poll", "randomBytes", "recoverAddress", "recoverPublicKey", "resolveProperties", "ripemd160", "serializeTransaction", "sha256", "sha512", "shallowCopy", "shuffled", "solidityKeccak256",
      "solidityPack", "soliditySha256", "splitSignature", "stripZeros", "toUtf8Bytes", "toUtf8CodePoints", "toUtf8String", "verifyMessage", "verifyTypedData", "zeroPad",
    ];
    const PROVIDERS = [
      "AlchemyProvider", "AlchemyWebSocketProvider", "AnkrProvider", "BaseProvider", "CloudflareProvider", "EtherscanProvider", "FallbackProvider", "Formatter", "InfuraProvider", "InfuraWebSocketProvider",
      "IpcProvider", "JsonRpcBatchProvider", "JsonRpcProvider", "JsonRpcSigner", "NodesmithProvider", "PocketProvider", "Provider", "QuickNodeProvider", "Resolver", "StaticJsonRpcProvider", "UrlJsonRpcProvider",
      "Web3Provider", "WebSocketProvider", "getDefaultProvider", "getNetwork", "isCommunityResourcable", "isCommunityResource", "showThrottleMessage",
    ];

    it("has every name of ethers v5's surface", async () => {
      const r = await run(`return [${JSON.stringify(TOP)}.filter((n) => e[n] === undefined), ${JSON.stringify(UTILS)}.filter((n) => u[n] === undefined), ${JSON.stringify(PROVIDERS)}.filter((n) => e.providers[n] === undefined)];`);
      expect(r.hasError, r.logs).to.equal(false);
      expect(r.response).to.deep.equal([[], [], []]);
    });

    it("what the sandbox lacks throws v5's UNSUPPORTED_OPERATION naming what to use instead (never a bare TypeError)", async () => {
      const calls = [
        "e.Wallet.fromMnemonic('test test test test test test test test test test test junk')", "e.Wallet.fromEncryptedJsonSync('{}', 'pw')", "new e.Wallet(" + JSON.stringify(KEY) + ").encryptSync('pw')",
        "u.HDNode.fromMnemonic('x')", "u.HDNode.fromSeed('0x00')", "u.HDNode.fromExtendedKey('xpub')", "u.entropyToMnemonic('0x00')", "u.mnemonicToEntropy('x')", "u.mnemonicToSeed('x')", "u.isValidMnemonic('x')",
        "u.getJsonWalletAddress('{}')", "u.fetchJson('https://example.com')", "u._fetchData('https://example.com')", "u.poll(() => 1)", "u.nameprep('x')", "u._toEscapedUtf8String('0x00')",
        "e.wordlists.en", "new e.Wordlist('en')", "e.getDefaultProvider()",
        ...PROVIDERS.filter((n) => !["BaseProvider", "JsonRpcBatchProvider", "JsonRpcProvider", "Provider", "StaticJsonRpcProvider", "getDefaultProvider", "getNetwork", "isCommunityResourcable", "isCommunityResource", "showThrottleMessage"].includes(n)).map((n) => `new e.providers.${n}("https://example.com")`),
      ];
      const r = await run(`const out = [];
        for (const c of ${JSON.stringify(calls)}) { try { new Function("e", "u", "return " + c)(e, u); out.push([c, "no error"]); } catch (x) { out.push([c, x.name, x.code, x.message]); } }
        try { await e.Wallet.fromEncryptedJson("{}", "pw"); out.push(["fromEncryptedJson", "no error"]); } catch (x) { out.push(["fromEncryptedJson", x.name, x.code, x.message]); }
        try { await new e.Wallet(${JSON.stringify(KEY)}).encrypt("pw"); out.push(["encrypt", "no error"]); } catch (x) { out.push(["encrypt", x.name, x.code, x.message]); }
        return out;`);
      expect(r.hasError, r.logs).to.equal(false);
      const out = r.response as [string, string, string, string][];
      expect(out).to.have.length(calls.length + 2);
      for (const [call, name, code, message] of out) {
        expect([call, name, code], message).to.deep.equal([call, "Error", "UNSUPPORTED_OPERATION"]);
        expect(message, call).to.match(/(is not supported in the sandbox: .*(use |keys come from)|there is no default provider in the sandbox; use )/);
      }
    });

    it("FixedNumber and FixedFormat answer what v5's answer (implemented: decimal arithmetic over BigNumber, in QuickJS)", async () => {
      const formats = ["fixed", "ufixed", "fixed128x18", "fixed64x4", "ufixed32x2", 6];
      const values = ["1.5", "-2.25", "0", "123456789.123456", "0.000001", "-0.5", "7"];
      // The same operations on both sides: the real FixedNumber here, the sandbox's there.
      const OPS = `(FixedNumber, formats, values) => formats.map((f) => values.map((v) => {
        try {
          const a = FixedNumber.from(v, f), b = FixedNumber.from("2.5", f);
          return [a.toString(), a.toHexString(), a.format.name, a.addUnsafe(b).toString(), a.subUnsafe(b).toString(), a.mulUnsafe(b).toString(), a.divUnsafe(b).toString(),
            a.floor().toString(), a.ceiling().toString(), a.round(1).toString(), a.round(3).toString(), a.isZero(), a.isNegative(), a.toUnsafeFloat(), a.toHexString(a.format.width >= 64 ? 64 : a.format.width), a.toFormat("fixed256x8").toString()];
        } catch (x) { return ["error", x.code, x.reason]; }
      }))`;
      // eslint-disable-next-line @typescript-eslint/no-implied-eval
      const real = () => (new Function(`return ${OPS}`)() as (...args: unknown[]) => unknown)(FixedNumber, formats, values);
      const r = await run(`const formats = ${JSON.stringify(formats)}, values = ${JSON.stringify(values)};
        return [(${OPS})(e.FixedNumber, formats, values), e.FixedNumber.fromValue(B.from("1500000000000000000"), 18).toString(), e.FixedNumber.fromBytes("0x0100", "ufixed16x2").toString(), e.FixedNumber.isFixedNumber(e.FixedNumber.from(1)),
          failure(() => e.FixedNumber.from("1.5", "fixed7x2")), failure(() => e.FixedNumber.from("-1", "ufixed")), failure(() => e.FixedNumber.from("1.5").addUnsafe(e.FixedNumber.from("1", "fixed64x4")))];`);
      expect(r.hasError, r.logs).to.equal(false);
      expect(r.response).to.deep.equal(JSON.parse(JSON.stringify([
        real(), FixedNumber.fromValue(BigNumber.from("1500000000000000000"), 18).toString(), FixedNumber.fromBytes("0x0100", "ufixed16x2").toString(), true,
        failure(() => FixedNumber.from("1.5", "fixed7x2")), failure(() => FixedNumber.from("-1", "ufixed")), failure(() => FixedNumber.from("1.5").addUnsafe(FixedNumber.from("1", "fixed64x4"))),
      ])));
    });

    it("_TypedDataEncoder.encode and getPayload answer v5's (from and resolveNames: the clear error)", async () => {
      const domain = { name: "Ether Mail", version: "1", chainId: 1, verifyingContract: "0xCcCCccccCCCCcCCCCCCcCcCccCcCCCcCcccccccC", salt: "0x" + "ab".repeat(32) };
      const types = { Mail: [{ name: "from", type: "Person" }, { name: "to", type: "Person[]" }, { name: "contents", type: "string" }, { name: "n", type: "uint256" }, { name: "b", type: "bytes" }, { name: "ok", type: "bool" }, { name: "i", type: "int8" }], Person: [{ name: "name", type: "string" }, { name: "wallet", type: "address" }] };
      const value = { from: { name: "Cow", wallet: "0xCD2a3d9F938E13CD947Ec05AbC7FE734Df8DD826" }, to: [{ name: "Bob", wallet: "0xbBbBBBBbbBBBbbbBbbBbbbbBBbBbbbbBbBbbBBbB" }], contents: "Hello", n: "12345678901234567890", b: "0x010203", ok: true, i: -5 };
      const big = { ...domain, chainId: "0x" + "f".repeat(20) };
      const r = await run(`const T = u._TypedDataEncoder, domain = ${JSON.stringify(domain)}, big = ${JSON.stringify(big)}, types = ${JSON.stringify(types)}, value = ${JSON.stringify(value)};
        return [T.encode(domain, types, value), T.getPayload(domain, types, value), T.getPayload(big, types, value).domain, failure(() => T.from(types))];`);
      expect(r.hasError, r.logs).to.equal(false);
      expect(r.response).to.deep.equal(JSON.parse(JSON.stringify([
        _TypedDataEncoder.encode(domain, types, value), _TypedDataEncoder.getPayload(domain, types, value), _TypedDataEncoder.getPayload(big, types, value).domain, ["UNSUPPORTED_OPERATION", "ethers.utils._TypedDataEncoder.from is not supported in the sandbox: use _TypedDataEncoder.hash, hashStruct, encode or getPayload, which take the types each time", null],
      ])));
    });

    it("base58 answers Bitcoin's base58 (v6's encodeBase58/decodeBase58); Logger and getAccountPath as v5's", async () => {
      const inputs = ["0x", "0x00", "0x0000", "0x0001020304ff", "0x00000001", "0x" + "ff".repeat(40), "0x" + "00".repeat(3) + "1234" + "ab".repeat(29)];
      const r = await run(`const inputs = ${JSON.stringify(inputs)};
        const encoded = inputs.map((h) => u.base58.encode(h));
        return [encoded, encoded.map((s) => u.hexlify(u.base58.decode(s))), failure(() => u.base58.decode("0OIl")),
          new u.Logger("x/1.0").makeError("boom", e.errors.INVALID_ARGUMENT, { a: 1, b: "two" }).message, failure(() => e.logger.throwArgumentError("bad", "arg", 5)), e.logger.version,
          failure(() => new u.Logger("x/1.0").checkArgumentCount(1, 2)), u.Logger.errors.CALL_EXCEPTION, u.getAccountPath(7), u.defaultPath, failure(() => u.getAccountPath(-1))];`);
      expect(r.hasError, r.logs).to.equal(false);
      const [encoded, decoded, badChar, ...rest] = r.response as unknown[];
      // v6's encodeBase58 writes nothing for no bytes, as v5; leading zero bytes are "1" each in both
      expect(encoded).to.deep.equal(inputs.map((h) => (h === "0x" ? "" : ethers6.encodeBase58(h))));
      expect(decoded).to.deep.equal(inputs);
      expect(badChar).to.deep.equal([null, null, null]); // a plain Error, as v5's basex throws
      const logger = new Logger("x/1.0");
      expect(rest).to.deep.equal([
        logger.makeError("boom", Logger.errors.INVALID_ARGUMENT, { a: 1, b: "two" }).message,
        failure(() => new Logger("ethers/5.7.2").throwArgumentError("bad", "arg", 5)),
        "ethers/5.7.2",
        failure(() => logger.checkArgumentCount(1, 2)),
        "CALL_EXCEPTION",
        "m/44'/60'/7'/0/0",
        "m/44'/60'/0'/0/0",
        ["INVALID_ARGUMENT", "invalid account index", null],
      ]);
    });
  });

  describe("what a call may cost the sandbox process", function () {
    it("a huge ABI is refused before ethers parses it, as the memory limit the action may catch", async () => {
      const r = await run(`const abi = []; for (let i = 0; i < 200000; i++) abi.push("function f" + i + "(uint256 a, address b) view returns (uint256)");
        try { new u.Interface(abi); return "parsed"; } catch (e) { return e.message; }`, { memoryBytes: 32 * 1024 * 1024 });
      expect(r.response).to.match(/^new Interface: memory limit exceeded/);
      expect([r.hasError, r.error?.limit]).to.deep.equal([false, undefined]); // caught: the run does not fail for it
    });

    it("ABI types nested 10,000 deep are refused before ethers recurses into them (a RangeError); 64 levels are fine", async () => {
      const deep = `"tuple(".repeat(10000) + "uint256" + ")".repeat(10000)`;
      const r = await run(`const out = [];
        for (const f of [() => u.defaultAbiCoder.encode([${deep}], [[]]), () => u.defaultAbiCoder.decode([${deep}], "0x"), () => new u.Interface(["function f(" + ${deep} + " x)"]), () => u.ParamType.from(${deep})]) {
          try { f(); out.push("accepted"); } catch (e) { out.push(e.name + ": " + e.message.replace(/^[^:]*: /, "")); }
        }
        const ok = "tuple(".repeat(60) + "uint256" + ")".repeat(60);
        let value = [7]; for (let i = 1; i < 60; i++) value = [value];
        out.push(u.defaultAbiCoder.decode([ok], u.defaultAbiCoder.encode([ok], [value]))[0].length);
        return out;`);
      expect(r.hasError, r.logs).to.equal(false);
      const out = r.response as unknown[];
      expect(out.slice(0, 4)).to.deep.equal(Array(4).fill("RangeError: ABI types nest more than 64 levels deep"));
      expect(out[4]).to.equal(1);
    });

    it("decoding asks for no more than the data holds: a fixed array of 10^9 values over 32 bytes is refused at once", async () => {
      const r = await run(`try { u.defaultAbiCoder.decode(["uint256[1000000000]"], "0x" + "00".repeat(32)); return "decoded"; } catch (e) { return e.message; }`);
      expect(r.response).to.match(/^abiCoder\.decode: memory limit exceeded/);
    });

    it("BigNumber on huge strings is bounded by QuickJS's bigint limit and the run's deadline; the sandbox keeps serving", async () => {
      const r = await run(`const out = [];
        try { B.from("9".repeat(2000000)); out.push("parsed"); } catch (e) { out.push(e.name); }
        try { B.from(2).pow(100000000); out.push("computed"); } catch (e) { out.push(e.name); }
        out.push(B.from("0x" + "f".repeat(4096)).add(1).toHexString().length);
        // input shapes that a naive normalisation would make quadratic: 2 MB of leading zero bytes, 2 MB of trailing zero decimals
        const started = Date.now();
        out.push(B.from("0x" + "00".repeat(1000000) + "01").toHexString());
        try { u.parseUnits("1." + "0".repeat(2000000) + "1", 18); } catch (e) { out.push(e.reason); }
        out.push(Date.now() - started < 2000);
        return out;`);
      expect(r.hasError, r.logs).to.equal(false);
      expect(r.response).to.deep.equal(["RangeError", "RangeError", 2 + 4096 + 2, "0x01", "fractional component exceeds decimals", true]);
      expect((await run("return 2")).response).to.equal(2);
    });
  });
});
