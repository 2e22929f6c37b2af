import type { Request, RequestHandler } from "express";
import { rateLimit } from "express-rate-limit";
import ipaddr from "ipaddr.js";
import { AppError } from "../errors";

/**
 * Express's `trust proxy` from VESTA_TRUST_PROXY: which hops in front of the relayer (the dstack
 * ingress, a load balancer) may name the client in X-Forwarded-For. Unset or "false": nobody, the
 * client is the socket's peer. A number: that many proxy hops. Otherwise a comma-separated list of
 * addresses, CIDR ranges or express's names (loopback, linklocal, uniquelocal). "true" (believe any
 * X-Forwarded-For, which every client can write) is refused: per-client limits would mean nothing.
 */
export function parseTrustProxy(raw: string | undefined): { value: false | number | string; problem?: string } {
  const v = (raw ?? "").trim();
  if (v === "" || v === "false") return { value: false };
  if (v === "true") return { value: false, problem: "VESTA_TRUST_PROXY=true would believe any X-Forwarded-For (clients write it themselves): give the proxy's addresses/CIDRs or the number of proxy hops" };
  if (/^\d+$/.test(v)) {
    const hops = Number(v);
    return hops >= 1 && hops <= 10 ? { value: hops } : { value: false, problem: "VESTA_TRUST_PROXY: a hop count must be from 1 to 10" };
  }
  const names = new Set(["loopback", "linklocal", "uniquelocal"]);
  const bad = v.split(",").map((s) => s.trim()).filter((s) => !(names.has(s) || ipaddr.isValid(s) || ipaddr.isValidCIDR(s)));
  if (bad.length) return { value: false, problem: `VESTA_TRUST_PROXY: not an address, CIDR range or loopback/linklocal/uniquelocal: ${bad.join(", ")}` };
  return { value: v };
}

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
