import { parse as parseYaml } from "yaml";
import { composeHash, unpinnedImages } from "./compose";

/**
 * dstack's `app_compose`: the JSON manifest a dstack VM boots from. Its SHA-256 (hex, over the exact
 * string) is the compose hash: measured into RTMR3 as the `compose-hash` event, whitelisted on
 * AppAuth by governance, reported by `/info`. The string is the deterministic JSON of dstack's SDK
 * (`getComposeHash` in @phala/dstack-sdk): keys sorted at every level, no whitespace. Deploy the file
 * this module writes (byte for byte), and the compose hash the VM measures is the one proposed.
 */

/** The manifest's settings besides the compose file (dstack's AppCompose fields, manifest version 2). */
export type AppComposeSettings = {
  manifest_version: 2;
  name: string;
  runner: "docker-compose";
  /** Keys from dstack's KMS (the `dstack` key provider of Vesta derives from them). */
  kms_enabled: boolean;
  key_provider: "kms";
  key_provider_id: string;
  /** The dstack gateway terminates TLS for the app's domain. */
  gateway_enabled: boolean;
  local_key_provider_enabled: boolean;
  /** Container logs are not public: they may hold account ids and request metadata. */
  public_logs: boolean;
  public_sysinfo: boolean;
  /** `/info`'s tcb_info (with app_compose) is public: verifiers need it (spec 2, application check). */
  public_tcbinfo: boolean;
  no_instance_id: boolean;
  secure_time: boolean;
};

/** Vesta's manifest settings (what governance approves along with the compose file). */
export const VESTA_APP_SETTINGS: AppComposeSettings = {
  manifest_version: 2,
  name: "vesta",
  runner: "docker-compose",
  kms_enabled: true,
  key_provider: "kms",
  key_provider_id: "",
  gateway_enabled: true,
  local_key_provider_enabled: false,
  public_logs: false,
  public_sysinfo: true,
  public_tcbinfo: true,
  no_instance_id: false,
  secure_time: true,
};

type Json = string | number | boolean | null | Json[] | { [key: string]: Json };

/** dstack's deterministic JSON: object keys sorted (code unit order) at every level, compact. */
export function deterministicJson(value: Json): string {
  const sorted = (v: Json): Json =>
    Array.isArray(v) ? v.map(sorted) : v && typeof v === "object" ? Object.fromEntries(Object.keys(v).sort().map((k) => [k, sorted(v[k])])) : v;
  return JSON.stringify(sorted(value));
}

const VARIABLE = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?:[:?+-][^}]*)?\}/g;

/**
 * The variables a compose file takes from its environment (`${NAME}`, `${NAME:-default}`, ...),
 * sorted: dstack passes only these encrypted variables to the VM (`allowed_envs`).
 */
export function composeVariables(composeFile: string): string[] {
  return [...new Set([...composeFile.matchAll(VARIABLE)].map((m) => m[1]))].sort();
}

/**
 * The app_compose string for a compose file and its compose hash. Throws when the file is not a
 * compose file (YAML with services).
 */
export function appComposeFor(composeFile: string, settings: AppComposeSettings = VESTA_APP_SETTINGS): { appCompose: string; composeHash: string } {
  const parsed = parseYaml(composeFile) as { services?: unknown } | null;
  if (!parsed || typeof parsed !== "object" || !parsed.services || typeof parsed.services !== "object") throw new Error("the compose file defines no services");
  const appCompose = deterministicJson({ ...settings, allowed_envs: composeVariables(composeFile), docker_compose_file: composeFile });
  return { appCompose, composeHash: composeHash(appCompose) };
}

/** The digest a compose file carries for an image not released yet (scripts/release.ts replaces it). */
export const UNRELEASED_DIGEST = `sha256:${"0".repeat(64)}`;

type ComposeService = { image?: unknown; volumes?: unknown };

/** Each service's image (`name@sha256:...`) of a compose file, by service name. */
export function composeImages(composeFile: string): Record<string, string> {
  const services = (parseYaml(composeFile) as { services?: Record<string, ComposeService | null> } | null)?.services ?? {};
  return Object.fromEntries(Object.entries(services).flatMap(([name, s]) => (typeof s?.image === "string" ? [[name, s.image]] : [])));
}

/**
 * Why a compose file cannot be deployed on dstack as it is: an image not pinned by digest, an image
 * not released yet (the zero digest), or a volume taken from a local path (a dstack app ships the
 * compose file alone, so `./file` mounts would be empty). Empty when it can.
 */
export function deployProblems(composeFile: string): string[] {
  const { problems } = unpinnedImages(composeFile);
  const services = (parseYaml(composeFile) as { services: Record<string, ComposeService | null> }).services;
  for (const [name, s] of Object.entries(services)) {
    if (typeof s?.image === "string" && s.image.endsWith(`@${UNRELEASED_DIGEST}`)) problems.push(`${name}: image ${s.image} is not released yet (run scripts/release.ts, which records the digest)`);
    for (const v of Array.isArray(s?.volumes) ? s.volumes : []) {
      const source = typeof v === "string" ? v.split(":")[0] : (v as { source?: unknown })?.source;
      if (typeof source === "string" && /^(\.|~)/.test(source)) problems.push(`${name}: volume ${JSON.stringify(source)} is a local path (a dstack app ships the compose file alone)`);
    }
  }
  return problems;
}
