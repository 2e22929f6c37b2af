import { createHash } from "node:crypto";
import { parse as parseYaml } from "yaml";

/** dstack's compose hash: SHA-256 (hex) of the `app_compose` string exactly as measured. */
export const composeHash = (appCompose: string) => createHash("sha256").update(appCompose, "utf8").digest("hex");

const PINNED = /@sha256:[0-9a-f]{64}$/;

/**
 * The services of the compose file inside `app_compose` whose image is not pinned by digest
 * (`image: name@sha256:<64 hex>`), or that are built on the machine (`build:`), which no digest
 * pins. Throws when `app_compose` holds no readable compose file.
 */
export function unpinnedServices(appCompose: string): { images: number; problems: string[] } {
  let manifest: { docker_compose_file?: unknown };
  try {
    manifest = JSON.parse(appCompose);
  } catch {
    throw new Error("app_compose is not JSON");
  }
  if (typeof manifest?.docker_compose_file !== "string") throw new Error("app_compose has no docker_compose_file");
  return unpinnedImages(manifest.docker_compose_file);
}

/** `unpinnedServices` for the compose file itself (YAML). */
export function unpinnedImages(composeFile: string): { images: number; problems: string[] } {
  let compose: { services?: Record<string, { image?: unknown; build?: unknown } | null> };
  try {
    compose = parseYaml(composeFile);
  } catch (err) {
    throw new Error(`docker_compose_file is not valid YAML (${(err as Error).message.split("\n")[0]})`);
  }
  const services = Object.entries(compose?.services ?? {});
  if (services.length === 0) throw new Error("docker_compose_file defines no services");
  const problems: string[] = [];
  let images = 0;
  for (const [name, service] of services) {
    const image = service?.image;
    if (service?.build !== undefined) problems.push(`${name}: built on the machine (build:), not pinned by a digest`);
    if (image === undefined) {
      if (service?.build === undefined) problems.push(`${name}: no image`);
      continue;
    }
    images++;
    if (typeof image !== "string" || !PINNED.test(image)) problems.push(`${name}: image ${JSON.stringify(image)} is not pinned with @sha256:<digest>`);
  }
  return { images, problems };
}
