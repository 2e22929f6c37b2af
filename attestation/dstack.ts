import fs from "node:fs/promises";
import path from "node:path";
import { DstackClient } from "@phala/dstack-sdk";
import { evidenceFile, jsonDocument, listingDocument, SAFE_NAME, type Document, type EvidenceSource } from "./documents";
import { PATHS } from "./types";

/** The regular files of the evidence directory that may be served, sorted; none when it is missing. */
async function evidenceNames(dir: string): Promise<string[]> {
  try {
    const entries = await fs.readdir(dir, { withFileTypes: true });
    return entries.filter((e) => e.isFile() && SAFE_NAME.test(e.name)).map((e) => e.name).sort();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw err;
  }
}

/**
 * Attestation documents from inside a dstack TEE: `/info` and `/attestation` from the guest agent
 * (Info, and GetQuote with zero report data), the evidence files from `evidenceDir`, where the
 * ingress container (dstack-ingress) writes its certificate, ACME account, checksums and quote.
 */
export function dstackEvidenceSource(opts: { endpoint?: string; evidenceDir: string }): EvidenceSource {
  const client = new DstackClient(opts.endpoint);
  let attestation: Promise<Document> | undefined;
  const quote = async () => {
    const { quote, event_log, vm_config } = await client.getQuote(Buffer.alloc(64));
    return jsonDocument({ quote, event_log, vm_config, development: false });
  };
  return {
    kind: "dstack",
    async document(p) {
      if (p === PATHS.info) return jsonDocument({ ...(await client.info()), development: false });
      if (p === PATHS.attestation) {
        // The quote only changes if RTMR3 is extended, which Vesta never does: fetch it once.
        attestation ??= quote().catch((err) => {
          attestation = undefined;
          throw err;
        });
        return attestation;
      }
      const names = await evidenceNames(opts.evidenceDir);
      if (p === PATHS.listing) return listingDocument(names);
      const name = p.slice(PATHS.listing.length);
      if (!p.startsWith(PATHS.listing) || !names.includes(name)) return undefined;
      return evidenceFile(name, await fs.readFile(path.join(opts.evidenceDir, name)));
    },
  };
}
