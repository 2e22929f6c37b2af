import { expect } from "chai";
import type { AddressInfo } from "node:net";
import crypto, { X509Certificate } from "node:crypto";
import https from "node:https";
import express from "express";
import { loadFixture } from "@nomicfoundation/hardhat-toolbox/network-helpers";
import { ethers } from "hardhat";
import { composeHash } from "../attestation/compose";
import { developmentEvidence, devComposeHash } from "../attestation/development";
import type { Evidence } from "../attestation/evidence";
import { parseEventLog } from "../attestation/eventLog";
import { mountAttestation } from "../attestation/routes";
import { PATHS } from "../attestation/types";
import { noFailures, verifyDeployment, verifyEvidence, type VerifyOptions } from "../attestation/verify";
import { leafCertificateDer } from "../attestation/x509";
import { collect, deployAppAuth, edit, editJson, governedAppAuth, result, statuses } from "./helpers/attestation";

const DOMAIN = "vesta.example.com";
const OFFLINE_PASSES = [
  "platform.event-log", "platform.evidence-event-log", "application.compose-hash", "application.images-pinned",
  "application.measured-compose-hash", "application.measured-app-id", "network.evidence-checksums", "network.report-data",
];
const ALWAYS_SKIPPED = ["platform.quote-signature", "platform.evidence-quote-signature", "application.compose-file", "application.image-signatures"];

/** Changes one runtime event of /attestation's event log. */
const editEvent = (ev: Evidence, name: string, change: (e: { event_payload: string; digest: string }) => void) =>
  editJson(ev, PATHS.attestation, (a) => {
    const log = parseEventLog(a.event_log);
    change(log.find((e) => e.event === name)!);
    a.event_log = JSON.stringify(log);
  });

describe("attestation verifier on the relayer's development evidence", function () {
  async function devFixture() {
    const { appAuth, safe, pins } = await governedAppAuth();
    const bare = await deployAppAuth(safe, []);
    const appId = appAuth.slice(2).toLowerCase();
    const dev = developmentEvidence({ appId, domain: DOMAIN });
    const ev = await collect(dev.source, "127.0.0.1");
    const account = JSON.parse(ev.docs.get(PATHS.acmeAccount)!.toString()).uri as string;
    const full: VerifyOptions = {
      provider: ethers.provider,
      governance: pins,
      tls: { der: leafCertificateDer(dev.certPem) },
      resolveCaa: async () => [{ critical: 128, issue: `letsencrypt.org; accounturi=${account}; validationmethods=dns-01` }],
    };
    return { ev, dev, appId, bareAppId: bare.slice(2).toLowerCase(), account, full };
  }

  describe("untouched", function () {
    it("passes every offline check, and skips (never passes) the quote signatures", async function () {
      const { ev } = await loadFixture(devFixture);
      const results = await verifyEvidence(ev);
      expect(noFailures(results)).to.equal(true);
      expect(results.filter((r) => r.status === "pass").map((r) => r.check)).to.deep.equal(OFFLINE_PASSES);
      expect(result(results, "platform.quote-signature").reason).to.contain("DEVELOPMENT evidence: a synthetic quote made without a TEE");
      expect(result(results, "governance.compose-hash-allowed").reason).to.equal("no chain to ask: give --rpc-url <url> (or VESTA_VERIFY_RPC_URL)");
    });

    it("passes the TLS, CAA and governance checks too, given the live certificate, CAA records and the chain", async function () {
      const { ev, full } = await loadFixture(devFixture);
      const results = await verifyEvidence(ev, full);
      const skipped = results.filter((r) => r.status !== "pass").map((r) => r.check);
      expect(skipped).to.deep.equal(ALWAYS_SKIPPED);
      expect(result(results, "governance.compose-hash-allowed").reason).to.match(/^allowedComposeHashes\(0x[0-9a-f]{16}…\) is true on 0x/);
    });
  });

  describe("tampered", function () {
    it("fails application.compose-hash when the compose file changed", async function () {
      const { ev } = await loadFixture(devFixture);
      const tampered = editJson(ev, PATHS.info, (i) => (i.tcb_info.app_compose = i.tcb_info.app_compose.replace("restart: always", "restart: no")));
      const r = result(await verifyEvidence(tampered), "application.compose-hash");
      expect(r.status).to.equal("fail");
      expect(r.reason).to.match(new RegExp(`^SHA-256 of app_compose is [0-9a-f]{64}, but /info says compose_hash ${devComposeHash()}$`));
    });

    it("fails the measured compose hash and governance when compose and compose_hash change together", async function () {
      const { ev, full } = await loadFixture(devFixture);
      const tampered = editJson(ev, PATHS.info, (i) => {
        i.tcb_info.app_compose = i.tcb_info.app_compose.replace("restart: always", "restart: no");
        i.compose_hash = composeHash(i.tcb_info.app_compose);
      });
      const results = await verifyEvidence(tampered, full);
      expect(statuses(results)).to.include({ "application.compose-hash": "pass", "application.measured-compose-hash": "fail", "governance.compose-hash-allowed": "fail" });
      expect(result(results, "application.measured-compose-hash").reason).to.match(
        new RegExp(`^the compose-hash event of /attestation measured ${devComposeHash()}, but /info says compose_hash [0-9a-f]{64}$`),
      );
    });

    it("fails application.images-pinned on an unpinned image or a build, naming the services", async function () {
      const { appId } = await loadFixture(devFixture);
      const composeFile = `services:\n  web:\n    image: nginx:latest\n  api:\n    build: .\n  db:\n    image: postgres@sha256:${"a".repeat(64)}\n`;
      const ev = await collect(developmentEvidence({ appId, domain: DOMAIN, composeFile }).source);
      const results = await verifyEvidence(ev);
      expect(result(results, "application.images-pinned")).to.deep.include({
        status: "fail",
        reason: 'web: image "nginx:latest" is not pinned with @sha256:<digest>; api: built on the machine (build:), not pinned by a digest',
      });
      expect(statuses(results)).to.include({ "application.compose-hash": "pass", "platform.event-log": "pass" });
    });

    it("fails network.report-data when quote.json's report_data is not SHA-256 of sha256sum.txt", async function () {
      const { ev } = await loadFixture(devFixture);
      const tampered = editJson(ev, PATHS.quote, (q) => (q.report_data = "00".repeat(64)));
      const r = result(await verifyEvidence(tampered), "network.report-data");
      expect(r.status).to.equal("fail");
      expect(r.reason).to.match(/^quote\.json report_data begins 0000000000000000…, but SHA-256 of sha256sum\.txt is [0-9a-f]{16}…$/);
    });

    it("fails network.report-data when quote.json's quote does not carry its report_data", async function () {
      const { ev } = await loadFixture(devFixture);
      const zeroQuote = JSON.parse(ev.docs.get(PATHS.attestation)!.toString()).quote;
      const r = result(await verifyEvidence(editJson(ev, PATHS.quote, (q) => (q.quote = zeroQuote))), "network.report-data");
      expect(r).to.deep.include({ status: "fail", reason: "quote.json report_data is not the report data of its quote (0000000000000000…)" });
    });

    it("fails the checksums and the report data when sha256sum.txt or a listed file changes", async function () {
      const { ev, appId } = await loadFixture(devFixture);
      const otherCert = developmentEvidence({ appId, domain: DOMAIN }).certPem;
      const swapped = await verifyEvidence(edit(ev, PATHS.cert(DOMAIN), () => otherCert));
      expect(result(swapped, "network.evidence-checksums")).to.deep.include({ status: "fail", reason: `the served cert-${DOMAIN}.pem do not match sha256sum.txt` });
      const relisted = await verifyEvidence(edit(ev, PATHS.checksums, (t) => t.replace(/^[0-9a-f]{64}/, "0".repeat(64))));
      expect(statuses(relisted)).to.include({ "network.evidence-checksums": "fail", "network.report-data": "fail" });
    });

    it("fails platform.event-log when a runtime event payload is edited, not when only a digest field is", async function () {
      const { ev } = await loadFixture(devFixture);
      const payload = await verifyEvidence(editEvent(ev, "instance-id", (e) => (e.event_payload = "22".repeat(20))));
      expect(result(payload, "platform.event-log").status).to.equal("fail");
      expect(result(payload, "platform.event-log").reason).to.contain("gives").and.contain("but the quote's RTMR3 is");
      const digestOnly = await verifyEvidence(editEvent(ev, "instance-id", (e) => (e.digest = "33".repeat(48))));
      expect(result(digestOnly, "platform.event-log")).to.deep.include({
        status: "pass",
        reason: "7 RTMR3 runtime events, digests recomputed from their payloads, replay to the quote's RTMR3; the digest fields of instance-id did not match their payloads and were ignored",
      });
    });

    it("fails governance when the compose hash is not whitelisted or app_id is no contract", async function () {
      const { ev, full, bareAppId } = await loadFixture(devFixture);
      const notAllowed = await verifyEvidence(editJson(ev, PATHS.info, (i) => (i.app_id = bareAppId)), full);
      expect(statuses(notAllowed)).to.include({ "governance.app-contract": "pass", "governance.compose-hash-allowed": "fail" });
      expect(result(notAllowed, "governance.compose-hash-allowed").reason).to.equal(
        `allowedComposeHashes(0x${devComposeHash()}) is false on ${ethers.getAddress(`0x${bareAppId}`)}: the compose hash is not whitelisted (propose it through the owner Safe)`,
      );
      const noContract = await verifyEvidence(editJson(ev, PATHS.info, (i) => (i.app_id = "11".repeat(20))), full);
      expect(result(noContract, "governance.app-contract").reason).to.equal(`no contract at 0x + app_id = ${ethers.getAddress(`0x${"11".repeat(20)}`)} on chain 31337`);
    });

    it("fails every check that needs a missing document, with the fetch error", async function () {
      const { dev } = await loadFixture(devFixture);
      const ev = await collect({ kind: "development", document: async (p) => (p === PATHS.quote ? undefined : dev.source.document(p)) });
      const results = await verifyEvidence(ev);
      const failed = results.filter((r) => r.status === "fail");
      expect(failed.map((r) => r.check)).to.deep.equal([
        "platform.evidence-event-log", "platform.evidence-quote-signature", "application.measured-compose-hash", "application.measured-app-id", "network.report-data",
      ]);
      for (const r of failed) expect(r.reason).to.equal("GET /evidences/quote.json: HTTP 404");
    });
  });

  describe("network.tls-certificate and network.caa", function () {
    it("fails when the live certificate is not the evidence one", async function () {
      const { ev, appId } = await loadFixture(devFixture);
      const other = leafCertificateDer(developmentEvidence({ appId, domain: DOMAIN }).certPem);
      const r = result(await verifyEvidence(ev, { tls: { der: other } }), "network.tls-certificate");
      expect(r.status).to.equal("fail");
      expect(r.reason).to.match(new RegExp(`^the live TLS leaf certificate \\(DER SHA-256 [0-9a-f]{16}…\\) is not cert-${DOMAIN}\\.pem`));
    });

    it("looks CAA up from the domain to its parents, and requires accounturi on every issue record", async function () {
      const { ev, account } = await loadFixture(devFixture);
      const caa = async (records: Record<string, { critical: number; issue?: string; iodef?: string }[]>) =>
        result(await verifyEvidence(ev, {
          resolveCaa: async (d) => {
            if (records[d]) return records[d];
            throw Object.assign(new Error("no data"), { code: "ENODATA" });
          },
        }), "network.caa");
      expect(await caa({ "example.com": [{ critical: 0, issue: `letsencrypt.org;accounturi=${account}` }] })).to.deep.include({
        status: "pass",
        reason: `every CAA issue record of example.com is bound to accounturi=${account}`,
      });
      expect((await caa({ [DOMAIN]: [{ critical: 0, issue: "letsencrypt.org" }, { critical: 0, issue: `letsencrypt.org; accounturi=${account}` }] })).reason).to.equal(
        `CAA of ${DOMAIN} lets issuance through without accounturi=${account}: letsencrypt.org`,
      );
      expect((await caa({ [DOMAIN]: [{ critical: 0, iodef: "mailto:ops@example.com" }] })).reason).to.equal(
        `the CAA records of ${DOMAIN} have no issue/issuewild property: they do not restrict issuance`,
      );
      expect((await caa({})).reason).to.equal(`no CAA records on ${DOMAIN} or its parents: any CA may issue certificates for it`);
    });

    it("skips CAA when DNS is unreachable", async function () {
      const { ev } = await loadFixture(devFixture);
      const results = await verifyEvidence(ev, { resolveCaa: async () => Promise.reject(Object.assign(new Error("timeout"), { code: "ETIMEOUT" })) });
      expect(result(results, "network.caa")).to.deep.include({ status: "skip", reason: `could not resolve CAA of ${DOMAIN} (ETIMEOUT): DNS unreachable or no such domain` });
    });

    it("makes a certificate TLS loads whatever random bytes its serial number starts from (a DER INTEGER in its shortest, positive form)", async function () {
      const randomBytes = crypto.randomBytes;
      // Serials from random bytes: a first byte of 0x00 or 0x80 (masked to 0x00) then one below 0x80 was
      // padding OpenSSL refuses ("illegal padding"), one certificate in 256; the rest are the usual cases.
      const starts = [[0x00, 0x01], [0x80, 0x00], [0x00, 0x80], [0x7f, 0xff], [0xff, 0xff], [0x01, 0x00]];
      for (const start of starts) {
        const serial = Buffer.concat([Buffer.from(start), Buffer.alloc(14, 0x5a)]);
        (crypto as { randomBytes: unknown }).randomBytes = (n: number) => (n === 16 ? Buffer.from(serial) : randomBytes(n));
        let tls: { keyPem: string; certPem: string };
        try {
          tls = developmentEvidence({ appId: "ab".repeat(20), domain: "localhost" });
        } finally {
          crypto.randomBytes = randomBytes;
        }
        const cert = new X509Certificate(tls.certPem);
        expect(cert.serialNumber, `serial from ${Buffer.from(start).toString("hex")}…`).to.match(/^[4-7][0-9A-F]{31}$/);
        const server = https.createServer({ key: tls.keyPem, cert: tls.certPem });
        server.close();
      }
    });

    it("reads the live leaf certificate of an https deployment and compares it with the evidence PEM", async function () {
      const { appId } = await loadFixture(devFixture);
      const dev = developmentEvidence({ appId, domain: "localhost" });
      const impostor = developmentEvidence({ appId, domain: "localhost" });
      const serve = async (tls: { keyPem: string; certPem: string }) => {
        const app = express();
        mountAttestation(app, dev.source);
        const server = https.createServer({ key: tls.keyPem, cert: tls.certPem }, app);
        await new Promise<void>((resolve) => server.listen(0, "localhost", resolve));
        return { url: `https://localhost:${(server.address() as AddressInfo).port}`, close: () => new Promise((r) => server.close(r)) };
      };
      const genuine = await serve(dev);
      const wrong = await serve(impostor);
      try {
        expect(result(await verifyDeployment(genuine.url, { insecure: true }), "network.tls-certificate").status).to.equal("pass");
        expect(result(await verifyDeployment(wrong.url, { insecure: true }), "network.tls-certificate").status).to.equal("fail");
        const strict = result(await verifyDeployment(genuine.url), "application.compose-hash");
        expect(strict).to.deep.include({ status: "fail", reason: "GET /info: self-signed certificate" });
      } finally {
        await genuine.close();
        await wrong.close();
      }
    });
  });
});
