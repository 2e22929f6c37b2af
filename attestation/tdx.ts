import { bareHex } from "./types";

/**
 * The parts of an Intel TDX quote (version 4) that the verifier reads, at their byte offsets from
 * the quote's first byte: a 48-byte header, then the 584-byte TD report (RTMR3 at 520..568,
 * report data at 568..632), then the signature data, which DCAP verification checks.
 */
const HEADER_LEN = 48;
const TD_REPORT_LEN = 584;
const RTMR3 = { start: 520, end: 568 };
const REPORT_DATA = { start: 568, end: 632 };
const TEE_TYPE_TDX = 0x81;
const ATTESTATION_KEY_ECDSA_P256 = 2;

/** Header user data of the relayer's synthetic development quotes (20 bytes): never in a real quote. */
export const DEV_QUOTE_MARKER = Buffer.from("VESTA-DEV-NOT-A-TEE!", "ascii");

export type TdxQuote = {
  raw: Buffer;
  version: number;
  rtmr3: Buffer;
  reportData: Buffer;
  /** True for a synthetic quote made by the relayer without a TEE (header marker). */
  development: boolean;
};

/** Decodes a hex quote (0x optional) and reads its header, RTMR3 and report data; throws on anything else. */
export function parseTdxQuote(hex: string): TdxQuote {
  const h = bareHex(hex);
  if (!/^([0-9a-f]{2})+$/.test(h)) throw new Error("the quote is not hex");
  const raw = Buffer.from(h, "hex");
  if (raw.length < REPORT_DATA.end + 4) throw new Error(`the quote is ${raw.length} bytes, too short for a TDX quote v4`);
  const version = raw.readUInt16LE(0);
  const teeType = raw.readUInt32LE(4);
  if (version !== 4) throw new Error(`quote version ${version}: only TDX quotes v4 are supported`);
  if (teeType !== TEE_TYPE_TDX) throw new Error(`quote TEE type 0x${teeType.toString(16)} is not TDX (0x81)`);
  return {
    raw,
    version,
    rtmr3: raw.subarray(RTMR3.start, RTMR3.end),
    reportData: raw.subarray(REPORT_DATA.start, REPORT_DATA.end),
    development: raw.subarray(28, 48).equals(DEV_QUOTE_MARKER),
  };
}

/**
 * A synthetic TDX quote v4 for development evidence: the given RTMR3 and report data at the real
 * offsets, zero elsewhere, the development marker in the header, and a structurally valid but
 * all-zero signature section. No hardware signed it; DCAP verification cannot pass on it.
 */
export function syntheticTdxQuote(rtmr3: Buffer, reportData: Buffer): Buffer {
  if (rtmr3.length !== 48 || reportData.length !== 64) throw new Error("RTMR3 is 48 bytes and report data 64");
  const header = Buffer.alloc(HEADER_LEN);
  header.writeUInt16LE(4, 0);
  header.writeUInt16LE(ATTESTATION_KEY_ECDSA_P256, 2);
  header.writeUInt32LE(TEE_TYPE_TDX, 4);
  DEV_QUOTE_MARKER.copy(header, 28);
  const body = Buffer.alloc(TD_REPORT_LEN);
  rtmr3.copy(body, RTMR3.start - HEADER_LEN);
  reportData.copy(body, REPORT_DATA.start - HEADER_LEN);
  // Signature data: ECDSA signature and attestation key (zero), then certification data of type 6
  // (QE report certification data: QE report, its signature, empty auth data, empty PCK chain of type 5).
  const qeCert = Buffer.concat([Buffer.alloc(384 + 64), u16(0), u16(5), u32(0)]);
  const sigData = Buffer.concat([Buffer.alloc(64 + 64), u16(6), u32(qeCert.length), qeCert]);
  return Buffer.concat([header, body, u32(sigData.length), sigData]);
}

function u16(n: number) {
  const b = Buffer.alloc(2);
  b.writeUInt16LE(n);
  return b;
}
function u32(n: number) {
  const b = Buffer.alloc(4);
  b.writeUInt32LE(n);
  return b;
}
