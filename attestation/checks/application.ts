import { composeHash, unpinnedServices } from "../compose";
import { attempt, docJson, fail, pass, skip, type Evidence, type Outcome } from "../evidence";
import { parseEventLog, runtimeEventPayloads } from "../eventLog";
import { AttestationDoc, bareHex, InfoDoc, PATHS, type CheckResult } from "../types";

/** The one `name` runtime event of each quote's event log must carry `expected` (hex). */
function measured(ev: Evidence, name: string, field: string, expected: string): Outcome {
  for (const path of [PATHS.attestation, PATHS.quote]) {
    const payloads = runtimeEventPayloads(parseEventLog(docJson(ev, path, AttestationDoc).event_log), name);
    if (payloads.length !== 1) return fail(`the event log of ${path} has ${payloads.length} ${name} events, expected exactly one`);
    if (payloads[0] !== expected) return fail(`the ${name} event of ${path} measured ${payloads[0]}, but /info says ${field} ${expected}`);
  }
  return pass(`the ${name} event of both event logs equals /info's ${field}`);
}

/**
 * Application: `/info`'s compose file hashes to its compose hash, pins every image by digest, and
 * is the one the TEE measured (the compose-hash and app-id runtime events).
 */
export async function applicationChecks(ev: Evidence): Promise<CheckResult[]> {
  const info = () => docJson(ev, PATHS.info, InfoDoc);
  return Promise.all([
    attempt("application.compose-hash", () => {
      const { compose_hash, tcb_info } = info();
      const actual = composeHash(tcb_info.app_compose);
      return actual === bareHex(compose_hash)
        ? pass(`SHA-256 of app_compose is compose_hash ${actual}`)
        : fail(`SHA-256 of app_compose is ${actual}, but /info says compose_hash ${bareHex(compose_hash)}`);
    }),
    attempt("application.images-pinned", () => {
      const { images, problems } = unpinnedServices(info().tcb_info.app_compose);
      return problems.length ? fail(problems.join("; ")) : pass(`all ${images} images are pinned with @sha256: digests`);
    }),
    attempt("application.image-signatures", () =>
      skip("not checked here: verify the images' keyless (Sigstore) signatures with cosign against the operator's CI identity"),
    ),
    attempt("application.measured-compose-hash", () => measured(ev, "compose-hash", "compose_hash", bareHex(info().compose_hash))),
    attempt("application.measured-app-id", () => measured(ev, "app-id", "app_id", bareHex(info().app_id))),
  ]);
}
