import { expect } from "chai";
import { loadFixture } from "@nomicfoundation/hardhat-toolbox/network-helpers";
import { ethers } from "hardhat";
import { Interface, keccak256 } from "ethers";
import { developmentEvidence, devComposeHash } from "../attestation/development";
import type { Evidence } from "../attestation/evidence";
import { appAuthCodeHash, SAFE_CODE, type GovernancePins } from "../attestation/pins";
import { PATHS, type CheckResult } from "../attestation/types";
import { noFailures, verifyEvidence } from "../attestation/verify";
import { collect, deployAppAuth, editJson, governedAppAuth } from "./helpers/attestation";

const SAFE_ABI = new Interface(["function enableModule(address module)"]);
const MULTI_SEND = new Interface(["function multiSend(bytes transactions)"]);

/**
 * The verifier pins what governance is: AppAuth's runtime code, its owner the expected Safe, that
 * Safe's code, threshold and owners, each read from the chain and reported as its own check; a
 * contract that merely answers the same questions does not pass.
 */
describe("attestation verifier: governance pinned to AppAuth's code and the owner Safe", function () {
  async function fixture() {
    const gov = await governedAppAuth("101");
    const ev = await collect(developmentEvidence({ appId: gov.appAuth.slice(2).toLowerCase(), domain: "vesta.example.com" }).source);
    const signers = await ethers.getSigners();
    return { ...gov, ev, signers };
  }
  /** The governance results for the evidence with app_id = `contract`. */
  const governance = async (ev: Evidence, contract: string, pins: GovernancePins): Promise<[string, string, string][]> => {
    const withAppId = editJson(ev, PATHS.info, (i) => (i.app_id = contract.slice(2).toLowerCase()));
    const results = await verifyEvidence(withAppId, { provider: ethers.provider, governance: pins });
    return results.filter((r: CheckResult) => r.check.startsWith("governance.")).map((r) => [r.check, r.status, r.reason]);
  };
  const notAppAuth = (address: string) => `not asked: ${address} is not the pinned AppAuth`;
  const notSafe = "not asked: AppAuth's owner is not a verified Safe";

  it("passes each check for AppAuth owned by the expected 2-of-3 Safe", async function () {
    const { ev, appAuth, safe, owners, pins } = await loadFixture(fixture);
    const code = keccak256(await ethers.provider.getCode(appAuth));
    expect(await governance(ev, appAuth, pins)).to.deep.equal([
      ["governance.app-contract", "pass", `0x + app_id = ${appAuth} is a contract on chain 31337`],
      ["governance.app-auth-code", "pass", `the runtime code of ${appAuth} hashes to ${code}: AppAuth compiled from contracts/AppAuth.sol (appId = its own address)`],
      ["governance.owner", "pass", `AppAuth's owner is the expected Safe ${safe}`],
      ["governance.safe-code", "pass", `${safe} is a SafeProxy of SafeL2 1.5.0, set up without a delegatecall, with no module enabled`],
      ["governance.safe-threshold", "pass", "the Safe needs 2 of 3 owners, as expected"],
      ["governance.safe-owners", "pass", `the Safe's owners are the 3 expected: ${owners.join(", ")}`],
      ["governance.compose-hash-allowed", "pass", `allowedComposeHashes(0x${devComposeHash().slice(0, 16)}…) is true on ${appAuth}`],
    ]);
    expect(appAuthCodeHash(appAuth)).to.equal(code);
  });

  it("fails a stub that allows every compose hash and claims the Safe as its owner, and asks it nothing else", async function () {
    const { ev, safe, pins } = await loadFixture(fixture);
    const stub = await (await ethers.deployContract("AllowAllStub", [safe])).getAddress();
    const stubHash = keccak256(await ethers.provider.getCode(stub));
    const results = await governance(ev, stub, pins);
    expect(results).to.deep.equal([
      ["governance.app-contract", "pass", `0x + app_id = ${stub} is a contract on chain 31337`],
      ["governance.app-auth-code", "fail", `the runtime code of ${stub} hashes to ${stubHash}, not ${appAuthCodeHash(stub)} (AppAuth compiled from contracts/AppAuth.sol (appId = its own address)): it is not AppAuth, and what it answers proves nothing`],
      ["governance.owner", "skip", notAppAuth(stub)],
      ["governance.safe-code", "skip", notAppAuth(stub)],
      ["governance.safe-threshold", "skip", notSafe],
      ["governance.safe-owners", "skip", notSafe],
      ["governance.compose-hash-allowed", "skip", notAppAuth(stub)],
    ]);
  });

  it("fails the right AppAuth code owned by an externally owned account", async function () {
    const { ev, signers, pins } = await loadFixture(fixture);
    const eoa = signers[10].address;
    const appAuth = await deployAppAuth(eoa);
    const results = await governance(ev, appAuth, pins);
    expect(results.map(([c, s]) => [c, s])).to.deep.equal([
      ["governance.app-contract", "pass"], ["governance.app-auth-code", "pass"], ["governance.owner", "fail"], ["governance.safe-code", "skip"],
      ["governance.safe-threshold", "skip"], ["governance.safe-owners", "skip"], ["governance.compose-hash-allowed", "pass"],
    ]);
    expect(results[2][2]).to.equal(`AppAuth's owner ${eoa} is an externally owned account: one key alone can allow any compose hash (governance must be a Safe)`);
    expect(results[3][2]).to.equal(`not asked: the owner ${eoa} is not a contract`);
    // without any pin too: an EOA owner is never governance
    expect((await governance(ev, appAuth, {}))[2][1]).to.equal("fail");
  });

  it("fails the right AppAuth code owned by a Safe with the wrong threshold, or other owners", async function () {
    const { ev, kit, owners, signers, pins } = await loadFixture(fixture);
    const weak = await kit.createSafe(owners, 1, "102");
    const weakAppAuth = await deployAppAuth(weak);
    const asExpected = await governance(ev, weakAppAuth, pins);
    expect(asExpected.find(([c]) => c === "governance.owner")).to.deep.equal(["governance.owner", "fail", `AppAuth's owner is ${weak}, not the expected Safe ${pins.safe}`]);
    const weakPinned = await governance(ev, weakAppAuth, { ...pins, safe: weak });
    expect(weakPinned.filter(([, s]) => s !== "pass")).to.deep.equal([["governance.safe-threshold", "fail", "the Safe needs 1 of 3 owners, not the expected 2"]]);

    const others = [owners[0], owners[1], signers[13].address];
    const otherSafe = await kit.createSafe(others, 2, "103");
    const otherPinned = await governance(ev, await deployAppAuth(otherSafe), { ...pins, safe: otherSafe });
    expect(otherPinned.filter(([, s]) => s !== "pass")).to.deep.equal([
      ["governance.safe-owners", "fail", `the Safe's owners are ${others.join(", ")}; expected but missing: ${owners[2]}; not expected: ${others[2]}`],
    ]);
  });

  it("fails a contract that claims the expected owners and threshold but is not a Safe", async function () {
    const { ev, owners, pins } = await loadFixture(fixture);
    const fake = await (await ethers.deployContract("FakeSafe", [owners, 2])).getAddress();
    const results = await governance(ev, await deployAppAuth(fake), { ...pins, safe: fake });
    const fakeHash = keccak256(await ethers.provider.getCode(fake));
    expect(results.slice(2, 6)).to.deep.equal([
      ["governance.owner", "pass", `AppAuth's owner is the expected Safe ${fake}`],
      ["governance.safe-code", "fail", `AppAuth's owner ${fake} is not a Safe: its code hashes to ${fakeHash}, not the SafeProxy's ${SAFE_CODE.proxy}`],
      ["governance.safe-threshold", "skip", notSafe],
      ["governance.safe-owners", "skip", notSafe],
    ]);
    expect(noFailures(await verifyEvidence(ev, { provider: ethers.provider, governance: { ...pins, safe: fake } }))).to.equal(false);
  });

  it("fails a Safe with a module enabled (a module acts without the owners' signatures)", async function () {
    const { ev, kit, owners, signers, pins } = await loadFixture(fixture);
    const safe = await kit.createSafe(owners, 2, "104");
    const module = signers[14].address;
    await kit.proposeSignExecute(safe, [{ to: safe, data: SAFE_ABI.encodeFunctionData("enableModule", [module]) }], [owners[0], owners[1]]);
    const results = await governance(ev, await deployAppAuth(safe), { ...pins, safe });
    expect(results.find(([c]) => c === "governance.safe-code")).to.deep.equal([
      "governance.safe-code", "fail", `the Safe ${safe} has module(s) ${module} enabled: a module acts as the Safe without the owners' signatures`,
    ]);
  });

  it("fails a Safe whose setup delegatecalled another contract (it could have written hidden owners)", async function () {
    const { ev, kit, owners, pins } = await loadFixture(fixture);
    const multiSend = Object.values(kit.contractNetworks)[0].multiSendAddress!;
    const safe = await kit.createSafe(owners, 2, "105", { to: multiSend, data: MULTI_SEND.encodeFunctionData("multiSend", ["0x"]) });
    const results = await governance(ev, await deployAppAuth(safe), { ...pins, safe });
    expect(results.find(([c]) => c === "governance.safe-code")).to.deep.equal([
      "governance.safe-code", "fail", `the Safe ${safe} was set up with a delegatecall to ${multiSend}, which could have written any of its storage (owners or modules no getter lists)`,
    ]);
  });

  it("skips what is not pinned, naming what the chain says; a pinned code hash replaces the compiled one", async function () {
    const { ev, appAuth, safe, owners } = await loadFixture(fixture);
    const unpinned = await governance(ev, appAuth, {});
    expect(unpinned.filter(([, s]) => s !== "pass")).to.deep.equal([
      ["governance.owner", "skip", `AppAuth's owner is ${safe}; give --safe <address> (VESTA_VERIFY_SAFE) to pin the expected Safe`],
      ["governance.safe-threshold", "skip", "the Safe needs 2 of 3 owners; give --safe-threshold <n> (VESTA_VERIFY_SAFE_THRESHOLD) to pin it"],
      ["governance.safe-owners", "skip", `the Safe's owners are ${owners.join(", ")}; give --safe-owners <a,b,...> (VESTA_VERIFY_SAFE_OWNERS) to pin them`],
    ]);
    const code = keccak256(await ethers.provider.getCode(appAuth));
    const other = keccak256("0x01");
    expect((await governance(ev, appAuth, { appAuthCodeHash: code }))[1]).to.deep.equal(["governance.app-auth-code", "pass", `the runtime code of ${appAuth} hashes to ${code}: the pinned --app-auth-code-hash`]);
    expect((await governance(ev, appAuth, { appAuthCodeHash: other }))[1]).to.deep.equal([
      "governance.app-auth-code", "fail", `the runtime code of ${appAuth} hashes to ${code}, not ${other} (the pinned --app-auth-code-hash): it is not AppAuth, and what it answers proves nothing`,
    ]);
  });
});
