import { expect } from "chai";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { developmentEvidence } from "../attestation/development";
import { ImagePolicy } from "../attestation/signatures";
import { verifyEvidence } from "../attestation/verify";
import { readImageSignatureOptions } from "../scripts/lib/imageSignatures";
import { collect, result } from "./helpers/attestation";
import { GITHUB_ISSUER, TestSigstore, type BundleOptions } from "./helpers/sigstore";

const VESTA = "ghcr.io/vesta-project/vesta";
const RELEASE = "https://github.com/vesta-project/vesta/.github/workflows/release.yml@refs/tags/v1.2.3";
const INGRESS_ID = "https://github.com/Dstack-TEE/dstack-examples/.github/workflows/build.yml@refs/heads/main";
const digest = (c: string) => `sha256:${c.repeat(64)}`;
const [APP, INGRESS, DB] = [digest("a"), digest("b"), digest("c")];
const COMPOSE = `services:
  relayer:
    image: ${VESTA}@${APP}
  triggers:
    image: ${VESTA}:1.2.3@${APP}
  ingress:
    image: dstacktee/dstack-ingress:20250929@${INGRESS}
  postgres:
    image: postgres:17-alpine@${DB}
`;
/** The repository's own policy file: what the README tells operators to use. */
const POLICY = ImagePolicy.parse(JSON.parse(fs.readFileSync(path.join(__dirname, "..", "deploy", "image-policy.json"), "utf8")));

describe("application.image-signatures: keyless Sigstore bundles checked offline against a trust root", function () {
  const sigstore = new TestSigstore();
  const good = { [APP]: [sigstore.bundle({ identity: RELEASE, subjects: [APP] })], [INGRESS]: [sigstore.bundle({ identity: INGRESS_ID, subjects: [INGRESS] })] };

  async function check(bundles: Record<string, unknown[]>, policy = POLICY, composeFile = COMPOSE) {
    const ev = await collect(developmentEvidence({ appId: "11".repeat(20), domain: "vesta.example.com", composeFile }).source);
    const results = await verifyEvidence(ev, { imageSignatures: { policy, trustedRoot: sigstore.trustedRoot(), bundles: (d) => bundles[d] ?? [] } });
    return result(results, "application.image-signatures");
  }
  it("passes when each image has a bundle by its policy's CI identity, or the policy accepts it pinned only", async function () {
    const r = await check(good);
    expect(r).to.deep.equal({
      check: "application.image-signatures",
      status: "pass",
      reason: [
        `relayer: signed by ${RELEASE}`,
        `triggers: signed by ${RELEASE}`,
        `ingress: signed by ${INGRESS_ID}`,
        "postgres: pinned only (Docker Official Image: signed with Docker Content Trust, not Sigstore; trusted through its pinned digest)",
      ].join("; "),
    });
  });

  it("skips, saying how to check, without a policy", async function () {
    const ev = await collect(developmentEvidence({ appId: "11".repeat(20), domain: "vesta.example.com", composeFile: COMPOSE }).source);
    const r = result(await verifyEvidence(ev), "application.image-signatures");
    expect(r.status).to.equal("skip");
    expect(r.reason).to.contain("--image-policy <file> --trusted-root <file> --signatures <dir>");
  });

  const prefix = `relayer: no valid signature by ${POLICY[VESTA] && "identity" in POLICY[VESTA] ? POLICY[VESTA].identity : ""} (${GITHUB_ISSUER}): `;
  for (const [what, o, reason] of [
    ["another repository's workflow signed it", { identity: "https://github.com/mallory/vesta/.github/workflows/release.yml@refs/tags/v1.2.3" }, "certificate identity error - expected"],
    ["a look-alike repository (prefix of the name)", { identity: "https://github.com/vesta-project/vesta-fork/.github/workflows/release.yml@refs/tags/v1.2.3" }, "certificate identity error - expected"],
    ["a branch build, not a release tag", { identity: "https://github.com/vesta-project/vesta/.github/workflows/release.yml@refs/heads/main" }, "certificate identity error - expected"],
    ["another OIDC issuer", { issuer: "https://gitlab.example.com" }, `invalid certificate extension - expected issuer=${GITHUB_ISSUER}, got issuer=https://gitlab.example.com`],
    ["a certificate from a CA outside the trusted root", { untrustedCa: true }, "Failed to verify certificate chain"],
    ["no SCT (not in the certificate transparency log)", { noSct: true }, "expected 1 SCTs, got 0"],
    ["no transparency log entry", { noTlog: true }, "expected 1 timestamps, got 0"],
    ["a statement about another image", { subjects: [digest("d")] }, `the signed statement is not about ${APP}`],
    ["a payload swapped after signing", { swapPayload: Buffer.from(JSON.stringify({ subject: [{ digest: { sha256: "a".repeat(64) } }] })) }, "signature verification failed"],
  ] as const) {
    it(`fails when ${what}`, async function () {
      const bundle = sigstore.bundle({ identity: RELEASE, subjects: [APP], ...(o as Partial<BundleOptions>) } as BundleOptions);
      const r = await check({ ...good, [APP]: [bundle] });
      expect(r.status).to.equal("fail");
      const problems = r.reason.split("; ");
      // the relayer and the triggers service run the same image: both are named, nothing else fails
      expect(problems.map((p) => p.split(":")[0])).to.deep.equal(["relayer", "triggers"]);
      expect(problems[0].startsWith(prefix)).to.equal(true, problems[0]);
      expect(problems[0].slice(prefix.length)).to.contain(reason);
    });
  }

  it("passes when one of several bundles is valid, and names every reason when none is", async function () {
    const bad = sigstore.bundle({ identity: RELEASE, subjects: [APP], noSct: true });
    expect((await check({ ...good, [APP]: [bad, ...good[APP]] })).status).to.equal("pass");
    const r = await check({ ...good, [APP]: [bad, { mediaType: "nonsense" }] });
    expect(r.reason.split("; relayer")[0]).to.match(/^relayer: no valid signature by .*: expected 1 SCTs, got 0; .+/);
  });

  it("fails an image without any bundle, and an image the policy does not name", async function () {
    expect((await check({ [INGRESS]: good[INGRESS] })).reason).to.equal(`relayer: no signature bundle for ${APP}; triggers: no signature bundle for ${APP}`);
    const extra = `${COMPOSE}  sidecar:\n    image: docker.io/library/busybox@${digest("e")}\n`;
    expect((await check(good, POLICY, extra)).reason).to.equal("sidecar: no signer is expected for docker.io/library/busybox (add it to the image policy)");
  });

  it("reads the bundles of a directory (gh attestation download's .jsonl, one bundle a line) and refuses half-given options", async function () {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "vesta-sigs-"));
    fs.writeFileSync(path.join(dir, `${APP.replace(":", "-")}.jsonl`), [sigstore.bundle({ identity: RELEASE, subjects: [APP], noSct: true }), ...good[APP]].map((b) => JSON.stringify(b)).join("\n") + "\n");
    fs.writeFileSync(path.join(dir, `${INGRESS.replace(":", "-")}.json`), JSON.stringify(good[INGRESS][0]));
    fs.writeFileSync(path.join(dir, "root.json"), JSON.stringify(sigstore.trustedRoot()));
    const opts = (await readImageSignatureOptions({ policy: "deploy/image-policy.json", signatures: dir, trustedRoot: path.join(dir, "root.json") }))!;
    expect(opts.bundles(APP)).to.have.length(2);
    expect(opts.bundles(INGRESS)).to.have.length(1);
    expect(opts.bundles(DB)).to.deep.equal([]);
    const ev = await collect(developmentEvidence({ appId: "11".repeat(20), domain: "vesta.example.com", composeFile: COMPOSE }).source);
    expect(result(await verifyEvidence(ev, { imageSignatures: opts }), "application.image-signatures").status).to.equal("pass");
    await expect(readImageSignatureOptions({ policy: "deploy/image-policy.json" })).to.be.rejectedWith("--image-policy needs --signatures <dir>");
    await expect(readImageSignatureOptions({ signatures: dir })).to.be.rejectedWith("--signatures and --trusted-root need --image-policy");
    fs.writeFileSync(path.join(dir, "bad-policy.json"), JSON.stringify({ [VESTA]: { identity: "x", issuer: "not a url" } }));
    await expect(readImageSignatureOptions({ policy: path.join(dir, "bad-policy.json"), signatures: dir })).to.be.rejectedWith(/bad-policy.json: ghcr.io\/vesta-project\/vesta/);
    fs.rmSync(dir, { recursive: true });
  });
});
