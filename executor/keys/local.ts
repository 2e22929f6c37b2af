import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import type { Logger } from "pino";
import type { KeyProvider } from "./provider";

/**
 * Development key provider: HMAC-SHA256 of the path under a 32-byte root secret kept in a file
 * (created with mode 0600 on first use). Anyone who reads that file can derive every key: never
 * use it for real funds. The secret is never logged.
 */
export class LocalKeyProvider implements KeyProvider {
  readonly kind = "local" as const;

  private constructor(private readonly root: Buffer) {}

  static open(file: string, logger: Logger): LocalKeyProvider {
    let root: Buffer;
    if (fs.existsSync(file)) {
      root = Buffer.from(fs.readFileSync(file, "utf8").trim(), "hex");
      if (root.length !== 32) throw new Error(`${file} must hold a 32-byte hex root secret`);
    } else {
      root = crypto.randomBytes(32);
      fs.mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
      fs.writeFileSync(file, root.toString("hex") + "\n", { mode: 0o600, flag: "wx" });
      logger.warn({ file }, "created a new local root secret");
    }
    logger.warn({ file }, "LOCAL KEY PROVIDER: keys are derived from a secret on disk, outside any TEE; for development only");
    return new LocalKeyProvider(root);
  }

  async deriveSecret(p: string): Promise<Uint8Array> {
    return new Uint8Array(crypto.createHmac("sha256", this.root).update(`vesta/key/v1/${p}`).digest());
  }
}
