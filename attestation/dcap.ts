import { getCollateral, verify, type Collateral } from "@phala/dcap-qvl";
import { fail, pass, skip, type Outcome } from "./evidence";
import type { TdxQuote } from "./tdx";

export type DcapOptions = {
  /** Intel DCAP collateral for the platform (PCK CRL, TCB info, QE identity), as dcap-qvl reads it. */
  collateral?: Collateral;
  /** A PCCS to fetch the collateral from instead (network access). */
  pccsUrl?: string;
  /** Verification time, Unix seconds (default: now). */
  now?: number;
};

/**
 * Verifies the quote's signature chain up to Intel's root CA with dcap-qvl (which also refuses a
 * revoked TCB). Skipped, never passed, without collateral; a development quote never passes.
 */
export async function quoteSignature(quote: TdxQuote, opts: DcapOptions): Promise<Outcome> {
  const haveCollateral = opts.collateral !== undefined || opts.pccsUrl !== undefined;
  if (quote.development) {
    const why = "DEVELOPMENT evidence: a synthetic quote made without a TEE, signed by no hardware";
    return haveCollateral ? fail(why) : skip(`${why} (and no DCAP collateral given)`);
  }
  if (!haveCollateral) return skip("no DCAP collateral: give --collateral <file> or --pccs-url <url> to verify the quote signature");
  const collateral = opts.collateral ?? (await getCollateral(opts.pccsUrl!, quote.raw));
  try {
    const report = verify(quote.raw, collateral, opts.now ?? Math.floor(Date.now() / 1000));
    const advisories = report.advisory_ids.length ? `, advisories ${report.advisory_ids.join(", ")}` : "";
    return pass(`DCAP signature chain verifies to Intel's root CA; TCB status ${report.status}${advisories}`);
  } catch (err) {
    return fail(`DCAP verification failed: ${(err as Error).message}`);
  }
}
