import { bundleFromJSON } from "@sigstore/bundle";
import { TrustedRoot } from "@sigstore/protobuf-specs";
import { toSignedEntity, toTrustMaterial, Verifier, type VerifierOptions } from "@sigstore/verify";
import { z } from "zod";

/**
 * Keyless image signatures (spec 2, application check): each image of the compose file must carry a
 * Sigstore bundle whose certificate names the expected signer (the CI workflow of the repository
 * that builds it, issued by that CI's OIDC issuer), chained to the trusted root (Fulcio), logged in
 * the transparency log (Rekor) and the certificate transparency log, and whose signed in-toto
 * statement names the image's digest as its subject. That is what GitHub's artifact attestations
 * (`actions/attest-build-provenance` with `push-to-registry`) and `cosign attest --new-bundle-format`
 * produce. An image may instead be accepted as pinned only, with the reason said in the policy.
 */

/** Who must have signed an image: a regular expression for the certificate's identity (SAN), and the OIDC issuer. */
const Signer = z.strictObject({ identity: z.string().min(1).max(1024), issuer: z.url().max(1024) });
const PinnedOnly = z.strictObject({ unsigned: z.string().min(1).max(1024) });

/** The policy file: image repository (without tag or digest) → its signer, or why it is accepted unsigned. */
export const ImagePolicy = z.record(z.string().min(1).max(512), z.union([Signer, PinnedOnly]));
export type ImagePolicy = z.infer<typeof ImagePolicy>;

export type ImageSignatureOptions = {
  policy: ImagePolicy;
  /** Sigstore's trusted root (trusted_root.json: Fulcio CAs, Rekor and CT log keys, timestamp authorities). */
  trustedRoot: unknown;
  /** The serialized bundles found for an image digest ("sha256:<hex>"). */
  bundles: (digest: string) => unknown[];
  /** Thresholds of the verifier; default (and production): one transparency log entry, one SCT, one timestamp. */
  thresholds?: VerifierOptions;
};

const IN_TOTO = "application/vnd.in-toto+json";
const Statement = z.looseObject({ subject: z.array(z.looseObject({ digest: z.record(z.string(), z.string()).optional() })) });

/** `registry/name[:tag]@sha256:hex` → repository and digest. */
export function splitImage(image: string): { repository: string; digest: string } | undefined {
  const m = /^([^@\s]+)@(sha256:[0-9a-f]{64})$/.exec(image);
  if (!m) return undefined;
  const name = m[1];
  const slash = name.lastIndexOf("/");
  const colon = name.lastIndexOf(":");
  return { repository: colon > slash ? name.slice(0, colon) : name, digest: m[2] };
}

/**
 * Verifies one bundle: chain, logs, timestamps and signature (sigstore), the signer's identity and
 * issuer, and that it signs an in-toto statement about `digest`. Returns the signer's identity;
 * throws with the reason.
 */
export function verifyImageBundle(verifier: Verifier, bundleJson: unknown, digest: string, signer: z.infer<typeof Signer>): string {
  const bundle = bundleFromJSON(bundleJson);
  if (bundle.content.$case !== "dsseEnvelope") throw new Error("not a DSSE (in-toto attestation) bundle");
  const envelope = bundle.content.dsseEnvelope;
  if (envelope.payloadType !== IN_TOTO) throw new Error(`payload type ${envelope.payloadType}, expected ${IN_TOTO}`);
  const verified = verifier.verify(toSignedEntity(bundle), { subjectAlternativeName: new RegExp(`^(?:${signer.identity})$`), extensions: { issuer: signer.issuer } });
  let statement;
  try {
    statement = Statement.parse(JSON.parse(envelope.payload.toString("utf8")));
  } catch {
    throw new Error("the signed payload is not an in-toto statement");
  }
  const hex = digest.slice("sha256:".length);
  if (!statement.subject.some((s) => s.digest?.sha256 === hex)) throw new Error(`the signed statement is not about ${digest}`);
  return verified.identity?.subjectAlternativeName ?? "";
}

/**
 * For each image of a compose file: "signed by <identity>" when one of its bundles verifies against
 * the policy, "pinned only (<reason>)" when the policy says so, else a problem. Every image must
 * have a policy entry: an image nobody vouches for is a failure.
 */
export function checkImageSignatures(images: Record<string, string>, opts: ImageSignatureOptions): { problems: string[]; notes: string[] } {
  const verifier = new Verifier(toTrustMaterial(TrustedRoot.fromJSON(opts.trustedRoot)), { tlogThreshold: 1, ctlogThreshold: 1, timestampThreshold: 1, ...opts.thresholds });
  const problems: string[] = [];
  const notes: string[] = [];
  for (const [service, image] of Object.entries(images)) {
    const ref = splitImage(image);
    if (!ref) {
      problems.push(`${service}: image ${image} is not pinned by digest`);
      continue;
    }
    const rule = Object.hasOwn(opts.policy, ref.repository) ? opts.policy[ref.repository] : undefined;
    if (!rule) {
      problems.push(`${service}: no signer is expected for ${ref.repository} (add it to the image policy)`);
    } else if ("unsigned" in rule) {
      notes.push(`${service}: pinned only (${rule.unsigned})`);
    } else {
      const reasons: string[] = [];
      let signedBy: string | undefined;
      const bundles = opts.bundles(ref.digest);
      for (const b of bundles) {
        try {
          signedBy = verifyImageBundle(verifier, b, ref.digest, rule);
          break;
        } catch (err) {
          reasons.push((err as Error).message);
        }
      }
      if (bundles.length === 0) problems.push(`${service}: no signature bundle for ${ref.digest}`);
      else if (signedBy === undefined) problems.push(`${service}: no valid signature by ${rule.identity} (${rule.issuer}): ${reasons.join("; ")}`);
      else notes.push(`${service}: signed by ${signedBy}`);
    }
  }
  return { problems, notes };
}
