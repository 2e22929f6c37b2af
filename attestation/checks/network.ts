import type { CaaRecord } from "node:dns";
import { Resolver } from "node:dns/promises";
import { isIP } from "node:net";
import { parseChecksums, sha256Hex } from "../documents";
import { attempt, doc, docJson, fail, pass, skip, type Evidence, type Outcome } from "../evidence";
import { parseTdxQuote } from "../tdx";
import { AcmeAccountDoc, bareHex, EvidenceQuoteDoc, PATHS, type CheckResult } from "../types";
import { leafCertificateDer } from "../x509";

export type ResolveCaa = (domain: string) => Promise<CaaRecord[]>;

/** The live TLS leaf certificate (DER), or why there is none to compare. */
export type LiveTls = { der: Buffer } | { skip: string } | { error: string };

export type NetworkOptions = { tls?: LiveTls; resolveCaa?: ResolveCaa };

const certPath = (ev: Evidence) => {
  if (!ev.domain) throw new Error("the evidence listing links no cert-<domain>.pem for this host");
  return PATHS.cert(ev.domain);
};

/** Every file `sha256sum.txt` lists has that checksum, and it lists the certificate and the ACME account. */
function checksumsMatch(ev: Evidence): Outcome {
  const sums = parseChecksums(doc(ev, PATHS.checksums).toString("utf8"));
  const wanted = ["acme-account.json", certPath(ev).slice(PATHS.listing.length)];
  const missing = wanted.filter((n) => !sums.has(n));
  if (missing.length) return fail(`sha256sum.txt does not list ${missing.join(", ")}`);
  const wrong = [...sums].filter(([name, sum]) => sha256Hex(doc(ev, `${PATHS.listing}${name}`)) !== sum).map(([n]) => n);
  if (wrong.length) return fail(`the served ${wrong.join(", ")} do not match sha256sum.txt`);
  return pass(`the ${sums.size} files listed in sha256sum.txt match their checksums`);
}

/** quote.json's report data begins with SHA-256(sha256sum.txt), and is what its quote carries. */
function reportDataCommits(ev: Evidence): Outcome {
  const expected = sha256Hex(doc(ev, PATHS.checksums));
  const q = docJson(ev, PATHS.quote, EvidenceQuoteDoc);
  const stated = bareHex(q.report_data);
  if (stated.slice(0, 64) !== expected) return fail(`quote.json report_data begins ${stated.slice(0, 16)}…, but SHA-256 of sha256sum.txt is ${expected.slice(0, 16)}…`);
  const quoted = parseTdxQuote(q.quote).reportData.toString("hex");
  if (quoted !== stated) return fail(`quote.json report_data is not the report data of its quote (${quoted.slice(0, 16)}…)`);
  return pass("quote.json's quote commits to SHA-256 of sha256sum.txt in its report data");
}

function tlsMatches(ev: Evidence, tls: LiveTls | undefined): Outcome {
  if (!tls) return skip("no live TLS certificate to compare");
  if ("skip" in tls) return skip(tls.skip);
  if ("error" in tls) return fail(`could not read the live TLS certificate: ${tls.error}`);
  const evidence = sha256Hex(leafCertificateDer(doc(ev, certPath(ev)).toString("utf8")));
  const live = sha256Hex(tls.der);
  return live === evidence
    ? pass(`the live TLS leaf certificate is the evidence certificate (DER SHA-256 ${live.slice(0, 16)}…)`)
    : fail(`the live TLS leaf certificate (DER SHA-256 ${live.slice(0, 16)}…) is not cert-${ev.domain}.pem (${evidence.slice(0, 16)}…)`);
}

const UNREACHABLE = new Set(["ENOTFOUND", "ETIMEOUT", "ECONNREFUSED", "ESERVFAIL", "EREFUSED", "ECONNRESET", "EAI_AGAIN", "ECANCELLED"]);

/** The CAA record set that applies to `domain`: its own, else the closest parent's (RFC 8659). */
async function relevantCaa(domain: string, resolve: ResolveCaa): Promise<{ at: string; records: CaaRecord[] } | undefined> {
  const labels = domain.split(".");
  for (let i = 0; i < labels.length; i++) {
    const at = labels.slice(i).join(".");
    try {
      const records = await resolve(at);
      if (records.length) return { at, records };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "ENODATA") throw err;
    }
  }
  return undefined;
}

const accountUris = (value: string) =>
  value.split(";").slice(1).map((p) => p.trim().split("=")).filter(([k]) => k === "accounturi").map(([, ...v]) => v.join("="));

/** CAA on the domain restricts issuance to the evidence's ACME account (every issue record names it). */
async function caaRestricts(ev: Evidence, resolve: ResolveCaa): Promise<Outcome> {
  const domain = ev.domain;
  if (!domain) return fail("no cert-<domain>.pem in the evidence listing: no domain to check");
  const account = docJson(ev, PATHS.acmeAccount, AcmeAccountDoc);
  const uri = account.uri ?? account.account_uri;
  if (!uri) return fail("acme-account.json has neither uri nor account_uri");
  if (domain === "localhost" || isIP(domain)) return skip(`${domain} has no public DNS: CAA cannot restrict it`);
  let found;
  try {
    found = await relevantCaa(domain, resolve);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? "";
    if (UNREACHABLE.has(code)) return skip(`could not resolve CAA of ${domain} (${code}): DNS unreachable or no such domain`);
    throw err;
  }
  if (!found) return fail(`no CAA records on ${domain} or its parents: any CA may issue certificates for it`);
  const issue = found.records.flatMap((r) => [r.issue, r.issuewild]).filter((v): v is string => v !== undefined);
  if (!issue.length) return fail(`the CAA records of ${found.at} have no issue/issuewild property: they do not restrict issuance`);
  const open = issue.filter((v) => !accountUris(v).includes(uri));
  if (open.length) return fail(`CAA of ${found.at} lets issuance through without accounturi=${uri}: ${open.join(" | ")}`);
  return pass(`every CAA issue record of ${found.at} is bound to accounturi=${uri}`);
}

/** Network: the evidence files are the ones the quote commits to, the live certificate is theirs, CAA pins the ACME account. */
export async function networkChecks(ev: Evidence, opts: NetworkOptions): Promise<CheckResult[]> {
  const resolver = new Resolver({ timeout: 3000, tries: 1 });
  const resolve = opts.resolveCaa ?? ((d: string) => resolver.resolveCaa(d));
  return Promise.all([
    attempt("network.evidence-checksums", () => checksumsMatch(ev)),
    attempt("network.report-data", () => reportDataCommits(ev)),
    attempt("network.tls-certificate", () => tlsMatches(ev, opts.tls)),
    attempt("network.caa", () => caaRestricts(ev, resolve)),
  ]);
}
