/**
 * What may reach `npm start`'s chain through its JSON-RPC port (./rpcServer.ts). Anyone who can
 * open the port may call it (other processes, and, through the browser, any web page the developer
 * visits), so the port offers what a wallet, ethers, viem or a Hardhat `--network localhost` script
 * needs, and nothing that edits the chain's state or acts as an account without its key:
 *
 * - Methods: the standard execution API (`eth_*`, `net_*`, `web3_*`; state changes only through
 *   transactions) and Hardhat's two read-only status calls. Refused: `hardhat_*` (setStorageAt,
 *   setCode, setBalance, impersonateAccount, mine, ...), `evm_*` (mine, snapshot, increaseTime,
 *   set*), `anvil_*`, `debug_*`, `personal_*`, `txpool_*`, `admin_*`, ... npm start's own funding,
 *   deployment and replay use the chain in its process, not the port. The node's own accounts
 *   (`eth_accounts`, `eth_sendTransaction`, `eth_sign*`) stay: they are Hardhat's test accounts,
 *   whose keys the whole world knows and which hold no role, so signing for them gives nothing a
 *   transaction signed with the published key would not.
 * - Origin: a browser names the page behind every POST and WebSocket handshake it sends (also to
 *   the page's own origin, so also after a DNS rebinding). Accepted: none (a program), a browser
 *   extension (a wallet: chrome-extension://, moz-extension://, safari-web-extension://) and the
 *   origins of VESTA_CHAIN_ALLOWED_ORIGINS. A web page's request is refused before it is read.
 * - Content type: application/json only. A page may send text/plain, form or multipart bodies
 *   without asking the server first (a "simple" request, no CORS preflight); a JSON request needs
 *   a preflight, which only the origins above pass. CORS headers name the one accepted origin,
 *   never `*`.
 */

/** Hardhat's status calls that read and change nothing. */
const HARDHAT_READS = new Set(["hardhat_metadata", "hardhat_getAutomine"]);

/** Why `method` may not be called through the port, or undefined when it may. */
export function portRefusal(method: string): string | undefined {
  if (/^(eth|net|web3)_[A-Za-z0-9]+$/.test(method) || HARDHAT_READS.has(method)) return undefined;
  return /^(hardhat|evm|anvil)_/.test(method)
    ? "the chain's state and accounts are edited only by signed transactions through the port (npm start's own tools run in its process)"
    : "the port serves the standard eth_, net_ and web3_ methods only";
}

/** Schemes of browser extensions (wallets) whose requests carry their own origin. */
const EXTENSION = /^(chrome-extension|moz-extension|safari-web-extension):\/\/[A-Za-z0-9._-]+$/;

/** Whether a request with this Origin header (undefined: none) may use the port. */
export function originAllowed(origin: string | undefined, allowed: ReadonlySet<string>): boolean {
  return origin === undefined || EXTENSION.test(origin) || allowed.has(origin);
}

/** Whether a Content-Type header is JSON (application/json, with parameters or not). */
export function isJsonContentType(type: string | undefined): boolean {
  return type !== undefined && /^application\/json\s*(;|$)/i.test(type.trim());
}

/** VESTA_CHAIN_ALLOWED_ORIGINS: exact origins (scheme://host[:port]) separated by commas; throws naming a bad one. */
export function parseAllowedOrigins(raw: string | undefined): Set<string> {
  const out = new Set<string>();
  for (const item of (raw ?? "").split(",").map((s) => s.trim()).filter(Boolean)) {
    let origin: string | undefined;
    try {
      const u = new URL(item);
      origin = (u.protocol === "http:" || u.protocol === "https:") && u.origin === item && !item.includes("*") ? u.origin : undefined;
    } catch {
      origin = undefined;
    }
    if (!origin) throw new Error(`VESTA_CHAIN_ALLOWED_ORIGINS: ${JSON.stringify(item)} is not an origin (http or https, scheme://host[:port], no path; no wildcard)`);
    out.add(origin);
  }
  return out;
}
