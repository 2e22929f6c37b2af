import fs from "node:fs";
import path from "node:path";
import { TrustedRoot } from "@sigstore/protobuf-specs";
import { ImagePolicy, type ImageSignatureOptions } from "../../attestation/signatures";

/** Largest bundle file read (a bundle is a few KiB; a directory of them is the operator's own). */
const MAX_BUNDLE_FILE_BYTES = 4 * 1024 * 1024;

/**
 * The bundles of a directory, by image digest: `sha256-<hex>.jsonl` (one bundle a line, as
 * `gh attestation download` writes them, with ":" replaced by "-") or `sha256-<hex>*.json` (one bundle).
 */
export function bundlesFromDirectory(dir: string): (digest: string) => unknown[] {
  const files = fs.readdirSync(dir);
  return (digest) => {
    const prefix = digest.replace(":", "-");
    const out: unknown[] = [];
    for (const f of files.filter((name) => name.startsWith(prefix) && /\.jsonl?$/.test(name))) {
      const file = path.join(dir, f);
      if (fs.statSync(file).size > MAX_BUNDLE_FILE_BYTES) throw new Error(`${file} is larger than ${MAX_BUNDLE_FILE_BYTES} bytes`);
      const text = fs.readFileSync(file, "utf8");
      const lines = f.endsWith(".jsonl") ? text.split("\n").filter((l) => l.trim()) : [text];
      for (const line of lines) out.push(JSON.parse(line));
    }
    return out;
  };
}

/**
 * The verifier's image signature options from its flags: none without a policy; with one, the
 * signatures directory is required and the trusted root is the file given or Sigstore's public-good
 * root fetched through TUF. Throws a usage message.
 */
export async function readImageSignatureOptions(given: { policy?: string; signatures?: string; trustedRoot?: string }): Promise<ImageSignatureOptions | undefined> {
  if (!given.policy) {
    if (given.signatures || given.trustedRoot) throw new Error("--signatures and --trusted-root need --image-policy (who must have signed each image)");
    return undefined;
  }
  if (!given.signatures) throw new Error("--image-policy needs --signatures <dir> (the images' Sigstore bundles)");
  const read = (what: string, file: string) => {
    try {
      return JSON.parse(fs.readFileSync(file, "utf8"));
    } catch (err) {
      throw new Error(`cannot read the ${what} ${file}: ${(err as Error).message}`);
    }
  };
  const policy = ImagePolicy.safeParse(read("image policy", given.policy));
  if (!policy.success) throw new Error(`the image policy ${given.policy}: ${policy.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ")}`);
  let trustedRoot: unknown;
  if (given.trustedRoot) trustedRoot = read("trusted root", given.trustedRoot);
  else trustedRoot = TrustedRoot.toJSON(await (await import("@sigstore/tuf")).getTrustedRoot());
  if (!fs.existsSync(given.signatures)) throw new Error(`no signatures directory ${given.signatures}`);
  return { policy: policy.data, trustedRoot, bundles: bundlesFromDirectory(given.signatures) };
}
