import { randomBytes } from "node:crypto";
import { appComposeFor } from "./appCompose";
import { composeHash } from "./compose";
import { checksumsFile, evidenceFile, jsonDocument, listingDocument, reportDataFor, sha256Hex, type Document, type EvidenceSource } from "./documents";
import { replayRegister, runtimeEvent } from "./eventLog";
import { syntheticTdxQuote } from "./tdx";
import { PATHS } from "./types";
import { selfSignedCertificate } from "./x509";

export const DEV_NOTICE =
  "DEVELOPMENT evidence, NOT from a TEE: made up by the relayer so the verifier can be exercised; it proves nothing about this machine.";

/** A digest that names a development placeholder image (no registry holds it). */
const placeholder = (name: string) => sha256Hex(`vesta development placeholder image: ${name}`);

/** The development compose file: every image pinned by digest, as production requires. */
export const DEV_COMPOSE_FILE = `services:
  vesta:
    image: ghcr.io/vesta-dev/vesta@sha256:${placeholder("vesta")}
    restart: always
    volumes:
      - /var/run/dstack.sock:/var/run/dstack.sock
      - vesta-data:/data
    environment:
      - VESTA_KEY_PROVIDER=dstack
      - VESTA_DATA_DIR=/data
  ingress:
    image: dstacktee/dstack-ingress@sha256:${placeholder("dstack-ingress")}
    restart: always
    ports:
      - "443:443"
    volumes:
      - evidences:/evidences
volumes:
  vesta-data:
  evidences:
`;

/** The `app_compose` manifest (dstack's format, attestation/appCompose.ts) around a compose file, as the exact measured string. */
export const devAppCompose = (composeFile = DEV_COMPOSE_FILE) => appComposeFor(composeFile).appCompose;

/** The compose hash of the development evidence (the same on every start). */
export const devComposeHash = () => composeHash(devAppCompose());

export type DevEvidenceOptions = {
  /** The app id: the AppAuth contract address without 0x (40 hex). */
  appId: string;
  /** The domain of the self-signed certificate (`cert-<domain>.pem`). */
  domain: string;
  /** Another compose file (tests use it to make evidence with unpinned images). */
  composeFile?: string;
};

/**
 * A self-consistent development evidence set, like a dstack deployment's but made without a TEE:
 * runtime events (app-id, compose-hash, instance-id, key-provider) whose replay is the RTMR3 of
 * two synthetic quotes (the one of `/attestation` with zero report data, the one of
 * `quote.json` committing to `sha256sum.txt`), and a self-signed certificate for the domain.
 */
export function developmentEvidence(opts: DevEvidenceOptions): { source: EvidenceSource; keyPem: string; certPem: string } {
  if (!/^[0-9a-f]{40}$/.test(opts.appId)) throw new Error("appId must be 40 lowercase hex characters (an address without 0x)");
  const appCompose = devAppCompose(opts.composeFile);
  const hash = composeHash(appCompose);
  const instanceId = randomBytes(20);
  const events = [
    runtimeEvent("system-preparing", Buffer.alloc(0)),
    runtimeEvent("app-id", Buffer.from(opts.appId, "hex")),
    runtimeEvent("compose-hash", Buffer.from(hash, "hex")),
    runtimeEvent("instance-id", instanceId),
    runtimeEvent("boot-mr-done", Buffer.alloc(0)),
    runtimeEvent("key-provider", Buffer.from(JSON.stringify({ name: "none", id: "vesta-development" }))),
    runtimeEvent("system-ready", Buffer.alloc(0)),
  ];
  const rtmr3 = replayRegister(events.map((e) => Buffer.from(e.digest, "hex")));
  const eventLog = JSON.stringify(events);
  const vmConfig = JSON.stringify({ spec_version: 1, os_image_hash: "", development: true });
  const dev = { development: true, notice: DEV_NOTICE };

  const { certPem, keyPem } = selfSignedCertificate(opts.domain, "Vesta development evidence (NOT from a TEE)");
  const account = Buffer.from(JSON.stringify({ body: { status: "valid", contact: [] }, uri: `https://acme.invalid/acct/vesta-development-${instanceId.toString("hex").slice(0, 16)}`, ...dev }, null, 2) + "\n");
  const certName = `cert-${opts.domain}.pem`;
  const checksums = Buffer.from(checksumsFile([["acme-account.json", account], [certName, Buffer.from(certPem)]]));
  const reportData = reportDataFor(checksums);

  const documents = new Map<string, Document>([
    [PATHS.info, jsonDocument({ app_id: opts.appId, instance_id: instanceId.toString("hex"), compose_hash: hash, app_name: "vesta", tcb_info: { app_compose: appCompose, rtmr3: rtmr3.toString("hex"), event_log: events }, ...dev })],
    [PATHS.attestation, jsonDocument({ quote: syntheticTdxQuote(rtmr3, Buffer.alloc(64)).toString("hex"), event_log: eventLog, vm_config: vmConfig, ...dev })],
    [PATHS.listing, listingDocument([certName, "sha256sum.txt", "quote.json", "acme-account.json"], DEV_NOTICE)],
    [PATHS.checksums, evidenceFile("sha256sum.txt", checksums)],
    [PATHS.quote, jsonDocument({ quote: syntheticTdxQuote(rtmr3, reportData).toString("hex"), event_log: eventLog, report_data: reportData.toString("hex"), vm_config: vmConfig, ...dev })],
    [PATHS.acmeAccount, evidenceFile("acme-account.json", account)],
    [PATHS.cert(opts.domain), evidenceFile(certName, Buffer.from(certPem))],
  ]);
  const source: EvidenceSource = { kind: "development", document: async (path) => documents.get(path) };
  return { source, keyPem, certPem };
}
