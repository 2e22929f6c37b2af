/**
 * `npm run release -- <image> [--skip-build] [--digest sha256:<hex>] [--propose]`: releases Vesta's
 * container image and makes docker-compose.yml deploy it.
 *
 *   1. builds and pushes the image (docker buildx build --push; skipped with --skip-build, e.g. when
 *      CI built it and --digest gives the pushed digest),
 *   2. records its digest in every service of docker-compose.yml that runs that image (the relayer
 *      and the triggers service): `image: <image>@sha256:<digest>`,
 *   3. prints the new compose hash and writes the app_compose to deploy (npm run compose:hash),
 *   4. with --propose, proposes the compose hash to the AppAuth Safe (npm run governance:propose;
 *      its environment: VESTA_RPC_URL, VESTA_APP_AUTH_ADDRESS, ...).
 *
 * The image's keyless signature is made by CI (.github/workflows/release.yml), where the OIDC
 * identity of the repository's workflow exists; README, "Operating Vesta" > "Releasing an image".
 */
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import { parseArgs } from "node:util";
import { parseDocument } from "yaml";

const DIGEST = /^sha256:[0-9a-f]{64}$/;

/**
 * The compose file with `image`'s digest set to `digest` in every service that runs it (any tag or
 * earlier digest replaced), and the services changed. Comments and layout are kept.
 */
export function recordDigest(composeFile: string, image: string, digest: string): { text: string; services: string[] } {
  if (!DIGEST.test(digest)) throw new Error(`not an image digest: ${digest}`);
  if (/[@\s]/.test(image) || /:[^/]*$/.test(image)) throw new Error(`give the image without tag or digest: ${image}`);
  const doc = parseDocument(composeFile);
  const services = doc.get("services") as { items?: { key: { value: string }; value: { get: (k: string) => unknown; set: (k: string, v: string) => void } }[] } | undefined;
  const changed: string[] = [];
  for (const item of services?.items ?? []) {
    const current = item.value?.get("image");
    if (typeof current !== "string") continue;
    const name = current.split("@")[0];
    const slash = name.lastIndexOf("/");
    const colon = name.lastIndexOf(":");
    if ((colon > slash ? name.slice(0, colon) : name) !== image) continue;
    item.value.set("image", `${image}@${digest}`);
    changed.push(item.key.value);
  }
  if (changed.length === 0) throw new Error(`no service of the compose file runs ${image}`);
  return { text: doc.toString({ lineWidth: 0, flowCollectionPadding: false }), services: changed };
}

function run(command: string, args: string[], env: NodeJS.ProcessEnv = process.env): string {
  return execFileSync(command, args, { encoding: "utf8", env, stdio: ["ignore", "pipe", "inherit"] });
}

function main() {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: { "skip-build": { type: "boolean", default: false }, digest: { type: "string" }, propose: { type: "boolean", default: false }, compose: { type: "string", default: "docker-compose.yml" } },
  });
  const image = positionals[0];
  if (!image || positionals.length !== 1) throw new Error("usage: npm run release -- <image, e.g. ghcr.io/owner/vesta> [--skip-build --digest sha256:<hex>] [--propose]");
  let digest = values.digest;
  if (!values["skip-build"]) {
    const metadata = "/tmp/vesta-release-metadata.json";
    run("docker", ["buildx", "build", "--push", "--provenance=false", "--metadata-file", metadata, "-t", `${image}:${run("git", ["rev-parse", "--short", "HEAD"]).trim()}`, "."]);
    digest = JSON.parse(fs.readFileSync(metadata, "utf8"))["containerimage.digest"];
  }
  if (!digest) throw new Error("--skip-build needs --digest sha256:<hex> (the digest CI pushed)");
  const { text, services } = recordDigest(fs.readFileSync(values.compose, "utf8"), image, digest);
  fs.writeFileSync(values.compose, text);
  console.log(`${values.compose}: ${services.join(", ")} now run ${image}@${digest}`);
  const env = { ...process.env, VESTA_COMPOSE_FILE: values.compose };
  const node = [process.execPath, "--require", "ts-node/register/transpile-only", "scripts/governance/compose-hash.ts"];
  process.stdout.write(run(node[0], [...node.slice(1), "hash"], env));
  if (values.propose) process.stdout.write(run(node[0], [...node.slice(1), "propose"], env));
  else console.log("Next: commit the compose file, then propose its hash (npm run governance:propose) and have the Safe's owners sign it.");
}

if (require.main === module) {
  try {
    main();
  } catch (err) {
    console.error(`release failed: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  }
}
