import type { Express, NextFunction, Request, Response } from "express";
import type { Logger } from "pino";
import type { Ctx } from "../relayer/context";
import type { AttestationConfig } from "../relayer/config";
import { AppError } from "../protocol/errors";
import { DEV_NOTICE, developmentEvidence } from "./development";
import { dstackEvidenceSource } from "./dstack";
import { SAFE_NAME, type EvidenceSource } from "./documents";
import { bareHex, PATHS } from "./types";

/** Chipotle serves `/info` and `/attestation` under this prefix too (`/dstack/v1/info`, `/dstack/v1/attestation`). */
const DSTACK_PREFIX = "/dstack/v1";
/** The document path a request names: the path itself, or the one its `/dstack/v1/` alias stands for. */
const documentPath = (p: string) => (p === `${DSTACK_PREFIX}${PATHS.info}` || p === `${DSTACK_PREFIX}${PATHS.attestation}` ? p.slice(DSTACK_PREFIX.length) : p);

/** `/info`, `/attestation`, `/evidences/` and `/evidences/<plain file name>`. */
const isAttestationPath = (p: string) =>
  p === PATHS.info || p === PATHS.attestation || p === PATHS.listing || (p.startsWith(PATHS.listing) && SAFE_NAME.test(p.slice(PATHS.listing.length)));

/** The evidence source the configuration asks for. */
export function evidenceSource(config: AttestationConfig, dstackEndpoint: string | undefined, logger: Logger): EvidenceSource {
  if (config.source === "dstack") return dstackEvidenceSource({ endpoint: dstackEndpoint, evidenceDir: config.evidenceDir });
  const appId = config.appAuthAddress ? bareHex(config.appAuthAddress) : "0".repeat(40);
  if (!config.appAuthAddress) logger.warn("VESTA_APP_AUTH_ADDRESS is not set: the development evidence has a zero app_id");
  logger.warn({ domain: config.domain, appId }, DEV_NOTICE);
  return developmentEvidence({ appId, domain: config.domain }).source;
}

/**
 * Serves the attestation documents at the base URL (GET, no authentication): `/info`,
 * `/attestation` (also as `/dstack/v1/info` and `/dstack/v1/attestation`, Chipotle's paths),
 * `/evidences/` (a directory listing) and `/evidences/<file>`.
 */
export function mountAttestation(app: Express, source: EvidenceSource) {
  app.use(async (req: Request, res: Response, next: NextFunction) => {
    if (req.method !== "GET" && req.method !== "HEAD") return next();
    if (req.path === "/evidences") return res.redirect(301, PATHS.listing);
    const path = documentPath(req.path);
    if (!isAttestationPath(path)) return next();
    let doc;
    try {
      doc = await source.document(path);
    } catch (err) {
      return next(new AppError(503, "attestation_unavailable", `the attestation source did not answer: ${(err as Error).message}`));
    }
    if (!doc) return next();
    res.type(doc.type).set("cache-control", "no-store").send(doc.body);
  });
}

/** Registers the attestation endpoints of the relayer, from the source its configuration names. */
export function attestationRoutes(app: Express, ctx: Ctx) {
  mountAttestation(app, evidenceSource(ctx.config.attestation, ctx.config.dstackEndpoint, ctx.logger));
}
