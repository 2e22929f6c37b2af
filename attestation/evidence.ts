import type { z } from "zod";
import { listingLinks, parseChecksums, SAFE_NAME } from "./documents";
import { PATHS, type CheckResult, type Status } from "./types";

/** What the verifier fetched from a deployment: documents by path, and why the missing ones are missing. */
export type Evidence = {
  docs: Map<string, Buffer>;
  errors: Map<string, string>;
  /** The domain whose `cert-<domain>.pem` the evidence holds (the base URL's host when listed). */
  domain?: string;
};

/** Reads one document (a path of the deployment) as raw bytes; rejects when it cannot. */
export type Getter = (path: string) => Promise<Buffer>;

const CERT_LINK = /^cert-(.+)\.pem$/;

/**
 * Fetches every attestation document: `/info`, `/attestation`, the evidence listing, the files it
 * links, and the files `sha256sum.txt` lists. A document that cannot be fetched is recorded with
 * its error; the checks that need it fail with that error.
 */
export async function collectEvidence(get: Getter, host?: string): Promise<Evidence> {
  const ev: Evidence = { docs: new Map(), errors: new Map() };
  const fetchDoc = async (path: string) => {
    if (ev.docs.has(path) || ev.errors.has(path)) return;
    try {
      ev.docs.set(path, await get(path));
    } catch (err) {
      ev.errors.set(path, (err as Error).message);
    }
  };
  await Promise.all([PATHS.info, PATHS.attestation, PATHS.listing, PATHS.checksums, PATHS.quote, PATHS.acmeAccount].map(fetchDoc));
  const links = ev.docs.has(PATHS.listing) ? listingLinks(ev.docs.get(PATHS.listing)!.toString()) : [];
  let listed: string[] = [];
  try {
    listed = ev.docs.has(PATHS.checksums) ? [...parseChecksums(ev.docs.get(PATHS.checksums)!.toString()).keys()] : [];
  } catch {
    /* the checksum check reports it */
  }
  const files = [...new Set([...links, ...listed])].filter((n) => SAFE_NAME.test(n));
  await Promise.all(files.map((n) => fetchDoc(`${PATHS.listing}${n}`)));
  const domains = links.map((l) => l.match(CERT_LINK)?.[1]).filter((d): d is string => !!d);
  ev.domain = host && domains.includes(host) ? host : domains.length === 1 ? domains[0] : undefined;
  return ev;
}

/** The bytes of a fetched document; throws the reason it is missing. */
export function doc(ev: Evidence, path: string): Buffer {
  const body = ev.docs.get(path);
  if (!body) throw new Error(ev.errors.get(path) ?? `${path} was not fetched`);
  return body;
}

/** A fetched JSON document, checked against `schema`; throws a clear reason otherwise. */
export function docJson<S extends z.ZodType>(ev: Evidence, path: string, schema: S): z.output<S> {
  let value: unknown;
  try {
    value = JSON.parse(doc(ev, path).toString("utf8"));
  } catch (err) {
    throw err instanceof SyntaxError ? new Error(`${path} is not JSON`) : err;
  }
  const parsed = schema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new Error(`${path}: ${issue.path.join(".") || "body"} ${issue.message}`);
  }
  return parsed.data;
}

export type Outcome = { status: Status; reason: string };
export const pass = (reason: string): Outcome => ({ status: "pass", reason });
export const fail = (reason: string): Outcome => ({ status: "fail", reason });
export const skip = (reason: string): Outcome => ({ status: "skip", reason });

/** Runs one check; an exception is a failure whose reason is its message. */
export async function attempt(check: string, fn: () => Outcome | Promise<Outcome>): Promise<CheckResult> {
  try {
    return { check, ...(await fn()) };
  } catch (err) {
    return { check, status: "fail", reason: (err as Error).message };
  }
}
