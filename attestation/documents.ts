import { createHash } from "node:crypto";

/** One document the attestation endpoints serve. */
export type Document = { body: Buffer; type: string };

/** Where the attestation documents come from: "development" (made up, no TEE) or "dstack" (the TEE). */
export interface EvidenceSource {
  readonly kind: "development" | "dstack";
  /** The document at `path` (`/info`, `/attestation`, `/evidences/`, `/evidences/<file>`), if any. */
  document(path: string): Promise<Document | undefined>;
}

export const sha256Hex = (data: Buffer | string) => createHash("sha256").update(data).digest("hex");

export const jsonDocument = (value: unknown): Document => ({
  body: Buffer.from(JSON.stringify(value, null, 2) + "\n"),
  type: "application/json",
});

const TYPES: Record<string, string> = { ".json": "application/json", ".txt": "text/plain; charset=utf-8", ".pem": "application/x-pem-file" };

/** An evidence file, typed by its extension. */
export const evidenceFile = (name: string, body: Buffer): Document => ({
  body,
  type: TYPES[name.slice(name.lastIndexOf("."))] ?? "application/octet-stream",
});

/** Evidence file names that may be served: plain names, no paths. */
export const SAFE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** The `/evidences/` directory listing: one link per file, and the notice when there is one. */
export function listingDocument(names: string[], notice?: string): Document {
  const items = names.map((n) => `<li><a href="${escapeHtml(n)}">${escapeHtml(n)}</a></li>`).join("\n");
  const warning = notice ? `<p><strong>${escapeHtml(notice)}</strong></p>\n` : "";
  const html = `<!DOCTYPE html>\n<html><head><title>Index of /evidences/</title></head><body>\n<h1>Index of /evidences/</h1>\n${warning}<ul>\n${items}\n</ul>\n</body></html>\n`;
  return { body: Buffer.from(html), type: "text/html; charset=utf-8" };
}

/** The links of a directory listing, in order. */
export const listingLinks = (html: string) => [...html.matchAll(/href="([^"]+)"/g)].map((m) => m[1]);

/** `sha256sum` output for `files` (name → content), one `<hex>  <name>` line each. */
export const checksumsFile = (files: [string, Buffer][]) => files.map(([name, body]) => `${sha256Hex(body)}  ${name}\n`).join("");

/** Parses `sha256sum` output into name → hex digest; throws on a line that is not `<64 hex> <name>`. */
export function parseChecksums(text: string): Map<string, string> {
  const sums = new Map<string, string>();
  for (const [i, line] of text.split("\n").entries()) {
    if (!line.trim()) continue;
    const m = line.match(/^([0-9a-fA-F]{64}) [ *](.+)$/);
    if (!m) throw new Error(`sha256sum.txt line ${i + 1} is not "<sha256>  <file>"`);
    sums.set(m[2], m[1].toLowerCase());
  }
  return sums;
}

/** The report data that commits to `sha256sum.txt`, as dstack-ingress makes it: its SHA-256, then 32 zero bytes. */
export const reportDataFor = (checksums: Buffer | string) => Buffer.concat([Buffer.from(sha256Hex(checksums), "hex"), Buffer.alloc(32)]);
