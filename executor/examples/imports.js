// Chipotle-style ES module imports: zod from the import CDN (jsDelivr's npm backend by default, as on
// Chipotle; VESTA_IMPORT_CDN_URL), pinned to an exact version. The whole import graph is fetched and
// checked before the action runs; showImportDetails() lists each module with its SHA-384, and
// Lit.Headers holds the request's x-request-id (and x-correlation-id when the caller sent one).
import { z } from "zod@3.22.4";

const Params = z.object({ name: z.string().min(1) });

async function main(params) {
  const { name } = Params.parse(params);
  return {
    greeting: `hi ${name}`,
    rejected: !Params.safeParse({ name: "" }).success,
    imports: Lit.Actions.showImportDetails().map((m) => ({ url: m.url, hash: m.hash.slice(0, 7) })),
    requestId: Lit.Headers.get("x-request-id"),
  };
}
