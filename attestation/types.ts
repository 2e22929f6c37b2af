import { z } from "zod";

/** The outcome of one verification check. "skip" never counts as a pass: the property is unproven. */
export type Status = "pass" | "fail" | "skip";
export type CheckResult = { check: string; status: Status; reason: string };

/** dstack's runtime events (app-id, compose-hash, ...) extend RTMR3 with this event type. */
export const RUNTIME_EVENT_TYPE = 0x08000001;

/** One event of a dstack event log (`event_payload` is hex). */
export const EventLogEntry = z.object({
  imr: z.number().int().min(0).max(3),
  event_type: z.number().int().min(0),
  digest: z.string(),
  event: z.string(),
  event_payload: z.string().regex(/^(0x)?([0-9a-fA-F]{2})*$/, "event_payload must be hex"),
});
export type EventLogEntry = z.infer<typeof EventLogEntry>;

/** `GET /info`. */
export const InfoDoc = z.looseObject({
  app_id: z.string(),
  compose_hash: z.string(),
  tcb_info: z.looseObject({ app_compose: z.string() }),
  development: z.boolean().optional(),
});
export type InfoDoc = z.infer<typeof InfoDoc>;

/** `GET /attestation`: a quote with zero report data and the event log that explains its RTMRs. */
export const AttestationDoc = z.looseObject({
  quote: z.string(),
  event_log: z.string(),
  vm_config: z.string().optional(),
  development: z.boolean().optional(),
});
export type AttestationDoc = z.infer<typeof AttestationDoc>;

/** `GET /evidences/quote.json`: a quote whose report data commits to `sha256sum.txt`. */
export const EvidenceQuoteDoc = AttestationDoc.extend({ report_data: z.string() });
export type EvidenceQuoteDoc = z.infer<typeof EvidenceQuoteDoc>;

/** `GET /evidences/acme-account.json` (certbot's `regr.json` has `uri`, other clients `account_uri`). */
export const AcmeAccountDoc = z.looseObject({ uri: z.string().optional(), account_uri: z.string().optional() });

/** Paths of the attestation documents, relative to the deployment's base URL. */
export const PATHS = {
  info: "/info",
  attestation: "/attestation",
  listing: "/evidences/",
  checksums: "/evidences/sha256sum.txt",
  quote: "/evidences/quote.json",
  acmeAccount: "/evidences/acme-account.json",
  cert: (domain: string) => `/evidences/cert-${domain}.pem`,
} as const;

/** Strips an optional 0x and lowercases a hex string. */
export const bareHex = (s: string) => s.replace(/^0x/i, "").toLowerCase();
