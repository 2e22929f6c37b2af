import type { Request, RequestHandler } from "express";
import { rateLimit } from "express-rate-limit";
import { AppError } from "../errors";

/**
 * A per-client limit of `limit` requests a minute on the routes it is mounted on, keyed on the
 * client's address as `trust proxy` resolves it (req.ip). `skip` exempts requests it does not
 * cover (e.g. billing calls without X-Wallet-Auth). One in-memory store per limiter (one replica).
 */
export function perClientLimit(limit: number, what: string, skip?: (req: Request) => boolean): RequestHandler {
  return rateLimit({
    windowMs: 60_000,
    limit,
    standardHeaders: "draft-7",
    legacyHeaders: false,
    skip,
    // Without a trusted proxy an X-Forwarded-For header is the client's own words and is ignored on
    // purpose (req.ip is the socket's peer): not a misconfiguration to warn about on every request.
    validate: { xForwardedForHeader: false },
    handler: (_req, _res, next) => next(new AppError(429, "rate_limited", `too many ${what} from this address (at most ${limit} a minute); try again in a minute`)),
  });
}
