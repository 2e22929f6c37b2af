import { ethers, ignition } from "hardhat";
import AppAuthModule from "../../ignition/modules/AppAuth";
import { devComposeHash } from "../../attestation/development";
import type { EvidenceSource } from "../../attestation/documents";
import { collectEvidence, type Evidence } from "../../attestation/evidence";
import type { GovernancePins } from "../../attestation/pins";
import type { CheckResult } from "../../attestation/types";
import { deploySafeInfrastructure } from "./safe";

export const statuses = (results: CheckResult[]) => Object.fromEntries(results.map((r) => [r.check, r.status]));
export const result = (results: CheckResult[], check: string) => results.find((r) => r.check === check)!;

/** Collects a source's documents as the verifier would over HTTP (404 for what it does not have). */
export const collect = (source: EvidenceSource, host?: string) =>
  collectEvidence(async (p) => {
    const d = await source.document(p);
    if (!d) throw new Error(`GET ${p}: HTTP 404`);
    return d.body;
  }, host);

/** A copy of `ev` with the document at `path` rewritten. */
export function edit(ev: Evidence, path: string, rewrite: (text: string) => string): Evidence {
  const docs = new Map(ev.docs);
  docs.set(path, Buffer.from(rewrite(docs.get(path)!.toString("utf8"))));
  return { ...ev, docs };
}
export const editJson = (ev: Evidence, path: string, change: (doc: any) => void) =>
  edit(ev, path, (text) => {
    const doc = JSON.parse(text);
    change(doc);
    return JSON.stringify(doc);
  });

/** Deploys AppAuth through its Ignition module, owned by `owner`, allowing `composeHashes`. */
export async function deployAppAuth(owner: string, composeHashes: string[] = [`0x${devComposeHash()}`]): Promise<string> {
  const { appAuth } = await ignition.deploy(AppAuthModule, { parameters: { AppAuthModule: { owner, initialComposeHashes: composeHashes } } });
  return appAuth.getAddress();
}

/**
 * Production-shaped governance on the in-process chain: a real 2-of-3 Safe (signers 10..12) owning
 * AppAuth, which allows the development compose hash; `pins` is what a verifier expects of it.
 */
export async function governedAppAuth(saltNonce = String(Date.now())) {
  const kit = await deploySafeInfrastructure();
  const signers = await ethers.getSigners();
  const owners = [signers[10], signers[11], signers[12]].map((s) => s.address);
  const safe = await kit.createSafe(owners, 2, saltNonce);
  const appAuth = await deployAppAuth(safe);
  const pins: GovernancePins = { safe, safeThreshold: 2, safeOwners: owners };
  return { kit, owners, safe, appAuth, pins };
}
