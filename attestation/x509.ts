import { generateKeyPairSync, randomBytes, sign, X509Certificate } from "node:crypto";
import { AsnConvert, OctetString } from "@peculiar/asn1-schema";
import {
  AlgorithmIdentifier,
  AttributeTypeAndValue,
  AttributeValue,
  BasicConstraints,
  Certificate,
  Extension,
  Extensions,
  GeneralName,
  id_ce_basicConstraints,
  id_ce_subjectAltName,
  Name,
  RelativeDistinguishedName,
  SubjectAlternativeName,
  SubjectPublicKeyInfo,
  TBSCertificate,
  Validity,
  Version,
} from "@peculiar/asn1-x509";

const ECDSA_WITH_SHA256 = "1.2.840.10045.4.3.2";
const COMMON_NAME = "2.5.4.3";
const ORGANIZATION = "2.5.4.10";

const toPem = (der: Buffer, label: string) =>
  `-----BEGIN ${label}-----\n${der.toString("base64").match(/.{1,64}/g)!.join("\n")}\n-----END ${label}-----\n`;

/**
 * A self-signed ECDSA P-256 certificate for `domain` (subject alternative name), valid for a year.
 * Used for development evidence only: no CA issued it, and its organization says so.
 */
export function selfSignedCertificate(domain: string, organization: string): { certPem: string; keyPem: string } {
  const { privateKey, publicKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
  const name = new Name([
    new RelativeDistinguishedName([new AttributeTypeAndValue({ type: ORGANIZATION, value: new AttributeValue({ utf8String: organization }) })]),
    new RelativeDistinguishedName([new AttributeTypeAndValue({ type: COMMON_NAME, value: new AttributeValue({ utf8String: domain }) })]),
  ]);
  const now = Date.now();
  const serial = randomBytes(16);
  // DER wants a positive INTEGER in its shortest form: a first byte of 0x00 (then one below 0x80)
  // is padding OpenSSL refuses ("illegal padding"), so the first byte is kept in 0x40..0x7f.
  serial[0] = 0x40 | (serial[0] & 0x3f);
  const tbs = new TBSCertificate({
    version: Version.v3,
    serialNumber: serial.buffer.slice(serial.byteOffset, serial.byteOffset + serial.length),
    signature: new AlgorithmIdentifier({ algorithm: ECDSA_WITH_SHA256 }),
    issuer: name,
    subject: name,
    validity: new Validity({ notBefore: new Date(now - 60_000), notAfter: new Date(now + 365 * 86_400_000) }),
    subjectPublicKeyInfo: AsnConvert.parse(publicKey.export({ type: "spki", format: "der" }), SubjectPublicKeyInfo),
    extensions: new Extensions([
      new Extension({ extnID: id_ce_basicConstraints, critical: true, extnValue: new OctetString(AsnConvert.serialize(new BasicConstraints({ cA: false }))) }),
      new Extension({
        extnID: id_ce_subjectAltName,
        extnValue: new OctetString(AsnConvert.serialize(new SubjectAlternativeName([new GeneralName({ dNSName: domain })]))),
      }),
    ]),
  });
  const tbsDer = Buffer.from(AsnConvert.serialize(tbs));
  const signature = sign("sha256", tbsDer, privateKey); // DER-encoded ECDSA signature
  const cert = new Certificate({
    tbsCertificate: tbs,
    signatureAlgorithm: new AlgorithmIdentifier({ algorithm: ECDSA_WITH_SHA256 }),
    signatureValue: signature.buffer.slice(signature.byteOffset, signature.byteOffset + signature.length),
  });
  return {
    certPem: toPem(Buffer.from(AsnConvert.serialize(cert)), "CERTIFICATE"),
    keyPem: privateKey.export({ type: "pkcs8", format: "pem" }).toString(),
  };
}

/** The DER bytes of the first certificate in a PEM file (a full chain starts with the leaf). */
export function leafCertificateDer(pem: string): Buffer {
  const first = pem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/);
  if (!first) throw new Error("no certificate in the PEM file");
  return new X509Certificate(first[0]).raw;
}
