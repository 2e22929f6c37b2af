import { expect } from "chai";
import { execFile } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { ethers, ignition, network } from "hardhat";
import AppAuthModule from "../ignition/modules/AppAuth";
import { appComposeFor } from "../attestation/appCompose";
import { composeHash } from "../attestation/compose";
import { devComposeHash } from "../attestation/development";
import type { CheckResult } from "../attestation/types";
import { GOVERNANCE_CHECKS } from "../attestation/checks/governance";
import { verifyDeployment, type GovernancePins } from "../attestation/verify";
import { readGovernanceEnv } from "../scripts/governance/env";
import { executeProposal, proposeComposeHash, readProposal, signProposal, writeProposal, type Connection } from "../scripts/governance/lib";
import { chainKeys, startStack, type Stack } from "./helpers/relayer";
import { deploySafeInfrastructure } from "./helpers/safe";

const governance = async (stack: Stack, pins: GovernancePins) =>
  (await verifyDeployment(stack.relayer.url, { rpcUrl: stack.rpcUrl, governance: pins })).filter((r) => r.check.startsWith("governance.")).map((r: CheckResult) => [r.check, r.status]);
/** Every governance check passes, the compose-hash one as given. */
const allPassBut = (composeHashAllowed: string) => GOVERNANCE_CHECKS.map((c) => [c, c === "governance.compose-hash-allowed" ? composeHashAllowed : "pass"]);

/**
 * The compose hash of the relayer's evidence reaches AppAuth only through its owner, a 2-of-3 Safe:
 * propose, two owners sign (the proposal travels as a JSON file), execute, with the functions the
 * `npm run governance:*` tasks run.
 */
describe("compose hash governance through the AppAuth owner Safe", function () {
  const hash = `0x${devComposeHash()}`;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "vesta-governance-"));
  let stack: Stack;
  let appAuth: string;
  let owners: string[];
  let safe: string;
  let conn: (signer?: string) => Connection;

  before(async () => {
    const kit = await deploySafeInfrastructure();
    const signers = await ethers.getSigners();
    owners = [signers[10], signers[11], signers[12]].map((s) => s.address);
    safe = await kit.createSafe(owners, 2, String(Date.now()));
    const deployed = await ignition.deploy(AppAuthModule, { parameters: { AppAuthModule: { owner: safe } } });
    appAuth = await deployed.appAuth.getAddress();
    conn = (signer) => ({ provider: network.provider, signer, contractNetworks: kit.contractNetworks });
    fs.writeFileSync(path.join(dir, "safe-contracts.json"), JSON.stringify(kit.contractNetworks));
    stack = await startStack({ payerCount: 1, env: { VESTA_APP_AUTH_ADDRESS: appAuth } });
  });
  after(async () => {
    await stack?.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it("fails the governance check before execution and passes it after propose → sign (2 of 3) → execute", async function () {
    const pins = { safe, safeThreshold: 2, safeOwners: owners };
    expect(await governance(stack, pins)).to.deep.equal(allPassBut("fail"));

    const file = path.join(dir, "proposal.json");
    writeProposal(file, await proposeComposeHash(conn(), { appAuth, composeHash: hash }));
    for (const owner of [owners[0], owners[2]]) writeProposal(file, await signProposal(conn(owner), readProposal(file)));
    const proposal = readProposal(file);
    expect(Object.keys(proposal.signatures)).to.deep.equal([owners[0], owners[2]]);
    expect(proposal).to.include({ appAuth, composeHash: hash });
    expect(await governance(stack, pins)).to.deep.equal(allPassBut("fail"));

    await executeProposal(conn(owners[1]), proposal);
    expect(await governance(stack, pins)).to.deep.equal(allPassBut("pass"));
    await expect(proposeComposeHash(conn(), { appAuth, composeHash: hash })).to.be.rejectedWith(`${hash} is already allowed on ${appAuth}`);
  });

  it("refuses to execute below the threshold, a non-owner's signature, and an altered proposal", async function () {
    const other = ethers.id("another compose file");
    const proposal = await proposeComposeHash(conn(), { appAuth, composeHash: other });
    const one = await signProposal(conn(owners[1]), proposal);
    await expect(executeProposal(conn(owners[1]), one)).to.be.rejectedWith("1 of the 2 owner signatures the Safe needs");
    const stranger = (await ethers.getSigners())[13].address;
    await expect(signProposal(conn(stranger), proposal)).to.be.rejectedWith(`${stranger} is not an owner of the Safe ${proposal.safe}`);
    await expect(signProposal(conn(owners[0]), { ...one, composeHash: hash })).to.be.rejectedWith("is not addComposeHash(composeHash) on appAuth");
    await expect(signProposal(conn(owners[0]), { ...one, tx: { ...one.tx, nonce: one.tx.nonce + 1 } })).to.be.rejectedWith("the proposal file was altered");
  });

  it("runs as npm tasks: propose (from the compose file), sign and execute from the environment, against the chain's RPC URL", async function () {
    this.timeout(180_000); // five processes, each loading the Safe kit
    const composeFile = path.join(dir, "docker-compose.yml");
    fs.writeFileSync(composeFile, `services:\n  relayer:\n    image: ghcr.io/vesta-project/vesta@sha256:${"4".repeat(64)}\n`);
    const other = `0x${appComposeFor(fs.readFileSync(composeFile, "utf8")).composeHash}`;
    const [alice, bob] = chainKeys(10, 2);
    const env = {
      ...process.env,
      VESTA_RPC_URL: stack.rpcUrl,
      VESTA_PROPOSAL_FILE: path.join(dir, "task-proposal.json"),
      VESTA_APP_AUTH_ADDRESS: appAuth,
      VESTA_COMPOSE_FILE: composeFile,
      VESTA_APP_COMPOSE_FILE: path.join(dir, "app-compose.json"),
      VESTA_SAFE_CONTRACT_NETWORKS: path.join(dir, "safe-contracts.json"),
    };
    const task = async (step: string, key?: string, more: Record<string, string> = {}) =>
      (await promisify(execFile)(process.execPath, ["--require", "ts-node/register/transpile-only", "scripts/governance/compose-hash.ts", step], {
        env: { ...env, ...(key ? { VESTA_SIGNER_KEY: key } : {}), ...more },
      })).stdout;
    const mismatch = await task("propose", undefined, { VESTA_COMPOSE_HASH: "ab".repeat(32) }).then(() => "", (e) => (e as { stderr: string }).stderr);
    expect(mismatch).to.contain(`has compose hash ${other}, not VESTA_COMPOSE_HASH 0x${"ab".repeat(32)}`);
    expect(fs.existsSync(env.VESTA_PROPOSAL_FILE)).to.equal(false);
    expect(await task("propose")).to.contain(`Proposed addComposeHash(${other}) on ${appAuth}`);
    expect(composeHash(fs.readFileSync(env.VESTA_APP_COMPOSE_FILE, "utf8"))).to.equal(other.slice(2)); // the manifest to deploy
    await task("sign", alice);
    expect(await task("sign", bob)).to.contain(`signatures so far: ${owners[0]}, ${owners[1]}`);
    expect(await task("execute", bob)).to.contain(`Executed: ${other} is allowed on ${appAuth}`);
    const allowed = await (await ethers.getContractAt("AppAuth", appAuth)).allowedComposeHashes(other);
    expect(allowed).to.equal(true);
  });

  it("reports every missing variable of a task at once", function () {
    expect(() => readGovernanceEnv({ VESTA_RPC_URL: "http://127.0.0.1:8545" }, { signer: true, proposal: true })).to.throw(
      /VESTA_SIGNER_KEY: required[\s\S]*VESTA_APP_AUTH_ADDRESS: required/,
    );
  });
});
