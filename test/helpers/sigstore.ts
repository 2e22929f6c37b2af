import { createHash, generateKeyPairSync, sign, type KeyObject } from "node:crypto";
import { AsnConvert, OctetString } from "@peculiar/asn1-schema";
import * as x509 from "@peculiar/asn1-x509";

/**
 * A Sigstore of our own, offline: a Fulcio-like CA, a Rekor-like transparency log and a CT log,
 * each an ECDSA P-256 key, the trusted root that lists them, and keyless bundles (DSSE, in-toto
 * statements) signed under short-lived certificates naming a CI identity, each logged (a signed
 * entry timestamp) and carrying an SCT: what the verifier checks on GitHub's, but made here.
 */

const ECDSA_SHA256 = "1.2.840.10045.4.3.2";
const OID_FULCIO_ISSUER_V1 = "1.3.6.1.4.1.57264.1.1";
const OID_SCT = "1.3.6.1.4.1.11129.2.4.2";
export const GITHUB_ISSUER = "https://token.actions.githubusercontent.com";
const IN_TOTO = "application/vnd.in-toto+json";

const newKey = () => generateKeyPairSync("ec", { namedCurve: "P-256" });
const spkiDer = (k: KeyObject) => k.export({ type: "spki", format: "der" });
const b64 = (b: Uint8Array | string) => Buffer.from(b).toString("base64");
const sha256 = (b: Uint8Array | string) => createHash("sha256").update(b).digest();

const name = (cn: string) =>
  new x509.Name([new x509.RelativeDistinguishedName([new x509.AttributeTypeAndValue({ type: "2.5.4.3", value: new x509.AttributeValue({ utf8String: cn }) })])]);
const ext = (extnID: string, value: ArrayBuffer | Uint8Array, critical = false) => new x509.Extension({ extnID, critical, extnValue: new OctetString(value) });

function tbsCertificate(o: { serial: number; issuer: string; subject: string; key: KeyObject; notBefore: Date; notAfter: Date; extensions: x509.Extension[] }) {
  return new x509.TBSCertificate({
    version: x509.Version.v3,
    serialNumber: new Uint8Array([o.serial]).buffer,
    signature: new x509.AlgorithmIdentifier({ algorithm: ECDSA_SHA256 }),
    issuer: name(o.issuer),
    subject: name(o.subject),
    validity: new x509.Validity({ notBefore: o.notBefore, notAfter: o.notAfter }),
    subjectPublicKeyInfo: AsnConvert.parse(new Uint8Array(spkiDer(o.key)), x509.SubjectPublicKeyInfo),
    extensions: new x509.Extensions(o.extensions),
  });
}

function signCertificate(tbs: x509.TBSCertificate, caKey: KeyObject): Buffer {
  const signature = sign("sha256", Buffer.from(AsnConvert.serialize(tbs)), caKey);
  const cert = new x509.Certificate({ tbsCertificate: tbs, signatureAlgorithm: new x509.AlgorithmIdentifier({ algorithm: ECDSA_SHA256 }), signatureValue: new Uint8Array(signature).buffer });
  return Buffer.from(AsnConvert.serialize(cert));
}

const u16 = (n: number) => Buffer.from([n >> 8, n & 0xff]);
const u24 = (n: number) => Buffer.from([n >> 16, (n >> 8) & 0xff, n & 0xff]);
const u64 = (n: number) => {
  const b = Buffer.alloc(8);
  b.writeBigUInt64BE(BigInt(n));
  return b;
};

/** The DSSE pre-authentication encoding (what the envelope's signature signs). */
const pae = (type: string, payload: Buffer) => Buffer.concat([Buffer.from(`DSSEv1 ${Buffer.byteLength(type)} ${type} ${payload.length} `), payload]);

export type BundleOptions = {
  /** The certificate's identity (SAN URI), e.g. a GitHub workflow. */
  identity: string;
  /** The certificate's OIDC issuer extension. */
  issuer?: string;
  /** The image digests ("sha256:<hex>") the in-toto statement names. */
  subjects: string[];
  /** Sign with this CA instead of the trusted one (a forged chain). */
  untrustedCa?: boolean;
  /** Leave out the SCT, or the transparency log entry. */
  noSct?: boolean;
  noTlog?: boolean;
  /** Sign the statement, then swap in this payload (a tampered envelope). */
  swapPayload?: Buffer;
};

export class TestSigstore {
  private ca = newKey();
  private rogueCa = newKey();
  private rekor = newKey();
  private ctlog = newKey();
  private readonly notBefore = new Date(Date.now() - 60_000);
  private readonly caCert = signCertificate(this.caTbs(this.ca.publicKey, "test fulcio"), this.ca.privateKey);
  private readonly rekorId = sha256(spkiDer(this.rekor.publicKey));
  private readonly ctlogId = sha256(spkiDer(this.ctlog.publicKey));
  private serial = 2;

  private caTbs(key: KeyObject, cn: string) {
    const basic = AsnConvert.serialize(new x509.BasicConstraints({ cA: true }));
    return tbsCertificate({ serial: 1, issuer: cn, subject: cn, key, notBefore: this.notBefore, notAfter: new Date(Date.now() + 24 * 3600_000), extensions: [ext(x509.id_ce_basicConstraints, basic, true)] });
  }

  /** Sigstore's trusted_root.json for this CA and these logs (JSON, as `--trusted-root` reads it). */
  trustedRoot(): unknown {
    const start = new Date(Date.now() - 3600_000).toISOString();
    const log = (key: KeyObject, id: Buffer) => ({
      baseUrl: "https://log.invalid",
      hashAlgorithm: "SHA2_256",
      publicKey: { rawBytes: b64(spkiDer(key)), keyDetails: "PKIX_ECDSA_P256_SHA_256", validFor: { start } },
      logId: { keyId: b64(id) },
    });
    return {
      mediaType: "application/vnd.dev.sigstore.trustedroot+json;version=0.1",
      tlogs: [log(this.rekor.publicKey, this.rekorId)],
      certificateAuthorities: [
        { subject: { organization: "test", commonName: "test fulcio" }, uri: "https://ca.invalid", certChain: { certificates: [{ rawBytes: b64(this.caCert) }] }, validFor: { start } },
      ],
      ctlogs: [log(this.ctlog.publicKey, this.ctlogId)],
      timestampAuthorities: [],
    };
  }

  /** A short-lived certificate for `key` naming the identity, with an SCT from the CT log. */
  private leafCertificate(key: KeyObject, o: BundleOptions): Buffer {
    const ca = o.untrustedCa ? this.rogueCa : this.ca;
    const san = AsnConvert.serialize(new x509.SubjectAlternativeName([new x509.GeneralName({ uniformResourceIdentifier: o.identity })]));
    const base = [ext(x509.id_ce_subjectAltName, san, true), ext(OID_FULCIO_ISSUER_V1, Buffer.from(o.issuer ?? GITHUB_ISSUER, "ascii"))];
    const fields = { serial: this.serial++, issuer: "test fulcio", subject: "", key, notBefore: this.notBefore, notAfter: new Date(Date.now() + 10 * 60_000) };
    if (o.noSct) return signCertificate(tbsCertificate({ ...fields, extensions: base }), ca.privateKey);
    // RFC 6962: the SCT signs the TBS certificate without the SCT extension, and the issuer's key hash.
    const precert = Buffer.from(AsnConvert.serialize(tbsCertificate({ ...fields, extensions: base })));
    const timestamp = u64(Date.now() - 1000);
    const signed = Buffer.concat([Buffer.from([0, 0]), timestamp, u16(1), sha256(spkiDer(ca.publicKey)), u24(precert.length), precert, u16(0)]);
    const sig = sign("sha256", signed, this.ctlog.privateKey);
    const sct = Buffer.concat([Buffer.from([0]), this.ctlogId, timestamp, u16(0), Buffer.from([4, 3]), u16(sig.length), sig]);
    const list = Buffer.concat([u16(sct.length + 2), u16(sct.length), sct]);
    const sctExt = ext(OID_SCT, AsnConvert.serialize(new OctetString(list)));
    return signCertificate(tbsCertificate({ ...fields, extensions: [...base, sctExt] }), ca.privateKey);
  }

  /** A keyless bundle (v0.1: the log entry with its signed entry timestamp) for an in-toto statement about `subjects`. */
  bundle(o: BundleOptions): Record<string, unknown> {
    const signer = newKey();
    const cert = this.leafCertificate(signer.publicKey, o);
    const statement = {
      _type: "https://in-toto.io/Statement/v1",
      subject: o.subjects.map((d) => ({ name: "ghcr.io/vesta-project/vesta", digest: { sha256: d.replace(/^sha256:/, "") } })),
      predicateType: "https://slsa.dev/provenance/v1",
      predicate: {},
    };
    const signedPayload = Buffer.from(JSON.stringify(statement));
    const sig = sign("sha256", pae(IN_TOTO, signedPayload), signer.privateKey);
    const payload = o.swapPayload ?? signedPayload;
    const certPem = `-----BEGIN CERTIFICATE-----\n${b64(cert).replace(/(.{64})/g, "$1\n")}\n-----END CERTIFICATE-----\n`;
    const body = JSON.stringify({
      apiVersion: "0.0.1",
      kind: "dsse",
      spec: {
        envelopeHash: { algorithm: "sha256", value: sha256(JSON.stringify({ payload: b64(payload), payloadType: IN_TOTO, signatures: [{ sig: b64(sig) }] })).toString("hex") },
        payloadHash: { algorithm: "sha256", value: sha256(payload).toString("hex") },
        signatures: [{ signature: b64(sig), verifier: b64(certPem) }],
      },
    });
    const integratedTime = Math.floor(Date.now() / 1000);
    const logIndex = this.serial;
    // The signed entry timestamp: the log's signature over the canonical JSON of the entry.
    const set = sign("sha256", Buffer.from(JSON.stringify({ body: b64(body), integratedTime, logID: this.rekorId.toString("hex"), logIndex })), this.rekor.privateKey);
    const tlogEntries = o.noTlog
      ? []
      : [{ logIndex: String(logIndex), logId: { keyId: b64(this.rekorId) }, kindVersion: { kind: "dsse", version: "0.0.1" }, integratedTime: String(integratedTime), inclusionPromise: { signedEntryTimestamp: b64(set) }, canonicalizedBody: b64(body) }];
    return {
      mediaType: "application/vnd.dev.sigstore.bundle+json;version=0.1",
      verificationMaterial: { x509CertificateChain: { certificates: [{ rawBytes: b64(cert) }] }, tlogEntries, timestampVerificationData: { rfc3161Timestamps: [] } },
      dsseEnvelope: { payload: b64(payload), payloadType: IN_TOTO, signatures: [{ sig: b64(sig), keyid: "" }] },
    };
  }
}
