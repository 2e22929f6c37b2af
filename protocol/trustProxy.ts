import ipaddr from "ipaddr.js";

/**
 * Express's `trust proxy` from `name` (VESTA_TRUST_PROXY, TRIGGERS_TRUST_PROXY): which hops in front of the relayer (the dstack
 * ingress, a load balancer) may name the client in X-Forwarded-For. Unset or "false": nobody, the
 * client is the socket's peer. A number: that many proxy hops. Otherwise a comma-separated list of
 * addresses, CIDR ranges or express's names (loopback, linklocal, uniquelocal). "true" (believe any
 * X-Forwarded-For, which every client can write) is refused: per-client limits would mean nothing.
 */
export function parseTrustProxy(raw: string | undefined, name = "VESTA_TRUST_PROXY"): { value: false | number | string; problem?: string } {
  const v = (raw ?? "").trim();
  if (v === "" || v === "false") return { value: false };
  if (v === "true") return { value: false, problem: `${name}=true would believe any X-Forwarded-For (clients write it themselves): give the proxy's addresses/CIDRs or the number of proxy hops` };
  if (/^\d+$/.test(v)) {
    const hops = Number(v);
    return hops >= 1 && hops <= 10 ? { value: hops } : { value: false, problem: `${name}: a hop count must be from 1 to 10` };
  }
  const names = new Set(["loopback", "linklocal", "uniquelocal"]);
  const bad = v.split(",").map((s) => s.trim()).filter((s) => !(names.has(s) || ipaddr.isValid(s) || ipaddr.isValidCIDR(s)));
  if (bad.length) return { value: false, problem: `${name}: not an address, CIDR range or loopback/linklocal/uniquelocal: ${bad.join(", ")}` };
  return { value: v };
}
