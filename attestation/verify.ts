import { JsonRpcProvider, type Provider } from "ethers";
import { applicationChecks, type ApplicationOptions } from "./checks/application";
import { governanceChecks } from "./checks/governance";
import { networkChecks, type LiveTls, type ResolveCaa } from "./checks/network";
import { platformChecks } from "./checks/platform";
import type { DcapOptions } from "./dcap";
import { collectEvidence, type Evidence } from "./evidence";
import type { GovernancePins } from "./pins";
import { httpGetter, liveLeafCertificate } from "./fetch";
import type { CheckResult } from "./types";

export type { CheckResult, Evidence, GovernancePins };

export type VerifyOptions = DcapOptions & ApplicationOptions & {
  /** JSON-RPC URL of the chain holding the app governance contract (AppAuth). */
  rpcUrl?: string;
  /** Or a provider for it (tests); takes precedence over `rpcUrl`. */
  provider?: Provider;
  /** What governance must be: AppAuth's code hash (default: from the compiled artifact), its owner Safe, threshold and owners. */
  governance?: GovernancePins;
  /** Fetch from an https base URL without validating its certificate. */
  insecure?: boolean;
  /** The live TLS leaf certificate, or why there is none (default: read from an https base URL). */
  tls?: LiveTls;
  /** CAA lookup (default: the system resolver through node:dns). */
  resolveCaa?: ResolveCaa;
};

/** Runs every check on evidence already collected; the live TLS certificate comes in `opts.tls`. */
export async function verifyEvidence(ev: Evidence, opts: VerifyOptions = {}): Promise<CheckResult[]> {
  const provider = opts.provider ?? (opts.rpcUrl ? new JsonRpcProvider(opts.rpcUrl, undefined, { staticNetwork: true }) : undefined);
  try {
    return [
      ...(await platformChecks(ev, opts)),
      ...(await applicationChecks(ev, opts)),
      ...(await networkChecks(ev, opts)),
      ...(await governanceChecks(ev, provider, opts.governance)),
    ];
  } finally {
    if (provider !== opts.provider) provider?.destroy();
  }
}

/** Reads the TLS leaf certificate of an https base URL; an http one has none. */
async function liveTls(url: URL): Promise<LiveTls> {
  if (url.protocol !== "https:") return { skip: `${url.protocol.replace(":", "")} base URL: no TLS certificate to compare (use the https URL of the deployment)` };
  try {
    return { der: await liveLeafCertificate(url) };
  } catch (err) {
    return { error: (err as Error).message };
  }
}

/**
 * Verifies a deployment from its base URL: fetches `/info`, `/attestation` and `/evidences/`, reads
 * the live TLS certificate, and returns one result per check (pass, fail or skip, with its reason).
 */
export async function verifyDeployment(baseUrl: string, opts: VerifyOptions = {}): Promise<CheckResult[]> {
  const url = new URL(baseUrl);
  const ev = await collectEvidence(httpGetter(baseUrl, opts.insecure), url.hostname);
  return verifyEvidence(ev, { ...opts, tls: opts.tls ?? (await liveTls(url)) });
}

/** Whether the results prove nothing false: no check failed (skips are not failures, nor passes). */
export const noFailures = (results: CheckResult[]) => results.every((r) => r.status !== "fail");
