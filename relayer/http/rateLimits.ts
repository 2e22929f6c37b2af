import type { Request, RequestHandler } from "express";
import { rateLimit } from "express-rate-limit";
import { AppError } from "../errors";

/**
 * A per-client limit of `limit` requests a minute on the routes it is mounted on, keyed on the
 * client's address as `trust proxy` resolves it (req.ip; IPv6 by /56). `skip` exempts requests it
 * does not cover (e.g. billing calls without X-Wallet-Auth). One in-memory store per limiter (one replica).
 */
export function perClientLimit(limit: number, what: string, skip?: (req: Request) => boolean): RequestHandler {
  return minuteLimit(limit, skip, undefined, `too many ${what} from this address (at most ${limit} a minute); try again in a minute`);
}

/** A limit of `limit` requests a minute shared by every client (for work no per-client limit bounds once clients are many). */
export function allClientsLimit(limit: number, what: string, skip?: (req: Request) => boolean): RequestHandler {
  return minuteLimit(limit, skip, () => "all clients", `too many ${what} from all clients together (at most ${limit} a minute); try again in a minute`);
}

function minuteLimit(limit: number, skip: ((req: Request) => boolean) | undefined, keyGenerator: (() => string) | undefined, message: string): RequestHandler {
  return rateLimit({
    windowMs: 60_000,
    limit,
    standardHeaders: "draft-7",
    legacyHeaders: false,
    skip,
    ...(keyGenerator ? { keyGenerator } : {}),
    // Without a trusted proxy an X-Forwarded-For header is the client's own words and is ignored on
    // purpose (req.ip is the socket's peer): not a misconfiguration to warn about on every request.
    validate: { xForwardedForHeader: false },
    handler: (_req, _res, next) => next(new AppError(429, "rate_limited", message)),
  });
}
