import { appComposeFor, composeImages } from "../appCompose";
import { composeHash, unpinnedServices } from "../compose";
import { checkImageSignatures, type ImageSignatureOptions } from "../signatures";
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

export type ApplicationOptions = {
  /** The compose file (YAML text) the deployment must run, with Vesta's manifest settings (attestation/appCompose.ts). */
  composeFile?: { name: string; text: string };
  /** How to check the images' keyless signatures (attestation/signatures.ts). */
  imageSignatures?: ImageSignatureOptions;
};

/** The deployed app_compose is the one built from `file`; else which part differs. */
function sameComposeFile(appCompose: string, file: { name: string; text: string }): Outcome {
  const expected = appComposeFor(file.text);
  const actual = composeHash(appCompose);
  if (actual === expected.composeHash) return pass(`app_compose is the manifest of ${file.name} (compose hash ${actual})`);
  let deployed: Record<string, unknown> = {};
  try {
    deployed = JSON.parse(appCompose);
  } catch {
    // reported below as a different compose file
  }
  if (deployed.docker_compose_file !== file.text) return fail(`the deployed compose file is not ${file.name} (compose hash ${actual}, ${file.name} gives ${expected.composeHash})`);
  const wanted = JSON.parse(expected.appCompose) as Record<string, unknown>;
  const keys = [...new Set([...Object.keys(wanted), ...Object.keys(deployed)])].filter((k) => JSON.stringify(wanted[k]) !== JSON.stringify(deployed[k]));
  return fail(`the deployed compose file is ${file.name}, but its manifest settings differ (${keys.sort().join(", ") || "serialization"}): compose hash ${actual}, expected ${expected.composeHash}`);
}

/** Every image of the deployed compose file is signed as the policy says. */
function signedImages(appCompose: string, opts: ImageSignatureOptions | undefined): Outcome {
  if (!opts) return skip("no image policy given (verify --image-policy <file> --trusted-root <file> --signatures <dir>): the images' keyless signatures are not checked");
  const manifest = JSON.parse(appCompose) as { docker_compose_file?: unknown };
  if (typeof manifest.docker_compose_file !== "string") return fail("app_compose has no docker_compose_file");
  const { problems, notes } = checkImageSignatures(composeImages(manifest.docker_compose_file), opts);
  return problems.length ? fail(problems.join("; ")) : pass(notes.join("; "));
}

/**
 * Application: `/info`'s compose file hashes to its compose hash, pins every image by digest, is
 * the one the TEE measured (the compose-hash and app-id runtime events), is the operator's compose
 * file (when given), and its images are signed by whom the image policy says (when given).
 */
export async function applicationChecks(ev: Evidence, opts: ApplicationOptions = {}): Promise<CheckResult[]> {
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
    attempt("application.compose-file", () =>
      opts.composeFile ? sameComposeFile(info().tcb_info.app_compose, opts.composeFile) : skip("no compose file given (verify --compose <file>): which compose file runs is not compared"),
    ),
    attempt("application.image-signatures", () => signedImages(info().tcb_info.app_compose, opts.imageSignatures)),
    attempt("application.measured-compose-hash", () => measured(ev, "compose-hash", "compose_hash", bareHex(info().compose_hash))),
    attempt("application.measured-app-id", () => measured(ev, "app-id", "app_id", bareHex(info().app_id))),
  ]);
}
