/**
 * Egress policy of action fetch(): which addresses an action may reach, and a connector that
 * connects only to an address it has just checked.
 *
 * Policy: public unicast only. IPv4: every special-purpose range of the IANA registry, as named by
 * ipaddr.js `range()` (loopback, private, carrierGradeNat, linkLocal, reserved, ...). IPv6: global
 * unicast (2000::/3) outside every special-purpose range ipaddr.js names, plus the IANA entries it
 * does not name yet. IPv6 forms that carry an IPv4 address (IPv4-mapped, IPv4-compatible,
 * NAT64 64:ff9b::/96 and 64:ff9b:1::/48, 6to4, Teredo) are refused whatever they carry; the reason
 * names the embedded IPv4 address and its range.
 *
 * The connector resolves the name once, checks every address of every family, refuses the name if
 * any address is not public, and hands the socket layer the checked IP literal (no second lookup,
 * so a DNS answer that changes between check and connect, "DNS rebinding", cannot redirect it).
 */
import { lookup } from "node:dns/promises";
import { isIP } from "node:net";
import ipaddr from "ipaddr.js";
import { buildConnector } from "undici";

/** One DNS answer. */
export type ResolvedAddress = { address: string; family?: number };
/** Resolves a host name to every address (both families). Injectable so tests need no DNS. */
export type Resolver = (hostname: string) => Promise<readonly ResolvedAddress[]>;
/** undici's socket factory: given an IP literal in `hostname`, opens the TCP (or TLS) connection. */
export type Connector = buildConnector.connector;

export type EgressOptions = {
  /** Name resolution (default: the system resolver, both families). */
  resolve?: Resolver;
  /** Skip the address policy (VESTA_ACTION_FETCH_PRIVATE=true: development and tests only). */
  allowPrivateNetworks?: boolean;
  /** Opens the socket to a checked address (default: undici's connector; tests pass a network double). */
  network?: Connector;
};

/** A refusal by the egress policy; the message is what the action sees. */
export class EgressRefused extends Error {}

/** IANA IPv6 special-purpose entries that ipaddr.js 2 does not name. */
const EXTRA_V6 = ([
  ["3fff::", 20, "documentation"], // RFC 9637
  ["5f00::", 16, "segmentRouting"], // RFC 9602 (SRv6 SIDs)
] as const).map(([net, bits, name]) => ({ net: ipaddr.IPv6.parse(net), bits, name }));
const GLOBAL_UNICAST = ipaddr.IPv6.parse("2000::");

/** The IPv4 address an IPv6 transition form carries, with the form's name. */
function embeddedV4(v6: ipaddr.IPv6): { form: string; v4: ipaddr.IPv4 } | null {
  const p = v6.parts;
  const v4 = (hi: number, lo: number) => new ipaddr.IPv4([hi >> 8, hi & 0xff, lo >> 8, lo & 0xff]);
  const last32 = () => v4(p[6], p[7]);
  switch (v6.range()) {
    case "ipv4Mapped":
      return { form: "IPv4-mapped", v4: last32() };
    case "rfc6145":
      return { form: "IPv4-translated", v4: last32() };
    case "rfc6052":
      return { form: "NAT64", v4: last32() };
    case "6to4":
      return { form: "6to4", v4: v4(p[1], p[2]) };
    case "teredo":
      return { form: "Teredo", v4: v4(p[6] ^ 0xffff, p[7] ^ 0xffff) }; // the client address, obfuscated
  }
  if (p.slice(0, 6).every((x) => x === 0) && (p[6] !== 0 || p[7] > 1)) return { form: "IPv4-compatible", v4: last32() };
  if (p[0] === 0x64 && p[1] === 0xff9b && p[2] === 1) return { form: "NAT64 local-use", v4: v4(p[3], ((p[4] & 0xff) << 8) | (p[5] >> 8)) }; // RFC 6052 /48 layout
  return null;
}

/** Parses an IP literal; IPv6 is first canonicalised by the WHATWG URL parser (ipaddr.js reads "::a.b.c.d" as IPv4-mapped). */
function parseIp(address: string): ipaddr.IPv4 | ipaddr.IPv6 | null {
  try {
    if (isIP(address) === 4) return ipaddr.IPv4.parse(address);
    if (isIP(address) === 6) return ipaddr.IPv6.parse(new URL(`http://[${address}]/`).hostname.slice(1, -1));
  } catch {
    // a zone id or any other form the URL parser refuses
  }
  return null;
}

/** Why an action may not reach `address`, or null when it is a public unicast address. */
export function refusedRange(address: string): string | null {
  const ip = parseIp(address);
  if (!ip) return "not a plain IP address";
  if (ip.kind() === "ipv4") {
    const range = ip.range();
    return range === "unicast" ? null : range;
  }
  const v6 = ip as ipaddr.IPv6;
  const carried = embeddedV4(v6);
  if (carried) return `${carried.form}, carries ${carried.v4.toString()} (${carried.v4.range()})`;
  const range = v6.range();
  if (range !== "unicast") return range;
  const extra = EXTRA_V6.find((r) => v6.match(r.net, r.bits));
  if (extra) return extra.name;
  return v6.match(GLOBAL_UNICAST, 3) ? null : "reserved (outside global unicast 2000::/3)";
}

/** The system resolver: every address of both families, in the resolver's order. */
export const systemResolver: Resolver = (hostname) => lookup(hostname, { all: true, verbatim: true });

/** The addresses `hostname` may be reached at, each checked; throws EgressRefused otherwise. */
export async function checkedAddresses(hostname: string, opts: EgressOptions = {}): Promise<string[]> {
  let addresses: string[];
  if (isIP(hostname)) addresses = [hostname];
  else {
    try {
      addresses = (await (opts.resolve ?? systemResolver)(hostname)).map((a) => a.address);
    } catch {
      addresses = [];
    }
    if (addresses.length === 0) throw new EgressRefused(`fetch: cannot resolve ${hostname}`);
  }
  if (opts.allowPrivateNetworks) return addresses;
  for (const address of addresses) {
    const reason = refusedRange(address);
    if (reason) throw new EgressRefused(`fetch: ${hostname} is a private or local address (${address}: ${reason}); actions may only reach public hosts`);
  }
  return addresses;
}

const undiciConnector = buildConnector({});

/**
 * An undici connector that resolves and checks the target itself, then connects to the checked
 * addresses in order (the next one when a connection fails) by IP literal. For https the TLS
 * server name (SNI and certificate check) stays the URL's host name.
 */
export function guardedConnector(opts: EgressOptions = {}): Connector {
  const network = opts.network ?? undiciConnector;
  return (target, callback) => {
    const name = target.hostname;
    const servername = target.servername || (isIP(name) ? undefined : name);
    checkedAddresses(name, opts).then(
      (addresses) => {
        const attempt = (i: number) =>
          network({ ...target, hostname: addresses[i], servername }, (...args) => {
            if (args[0] && i + 1 < addresses.length) attempt(i + 1);
            else callback(...args);
          });
        attempt(0);
      },
      (err: Error) => callback(err, null),
    );
  };
}
