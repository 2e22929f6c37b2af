import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";

/** base64url(sha256(token)): the challenge the browser sees and the form a bearer token is stored in. */
export const challengeOf = (token: string): string => crypto.createHash("sha256").update(token, "utf8").digest("base64url");

export const randomToken = (bytes = 32): string => crypto.randomBytes(bytes).toString("base64url");

export const newId = (prefix: string): string => `${prefix}_${crypto.randomBytes(12).toString("hex")}`;

/** The AES-256-GCM key: from the environment, else from the secret file (created with 32 random bytes, mode 0600). */
export function loadSecretKey(hex: string | undefined, file: string): Buffer {
  if (hex) return Buffer.from(hex, "hex");
  if (!fs.existsSync(file)) {
    fs.mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
    fs.writeFileSync(file, crypto.randomBytes(32).toString("hex"), { mode: 0o600, flag: "wx" });
  }
  const text = fs.readFileSync(file, "utf8").trim();
  if (!/^[0-9a-fA-F]{64}$/.test(text)) throw new Error(`${file} must hold 32 bytes of hex`);
  return Buffer.from(text, "hex");
}

/** Encrypts a secret at rest: base64(iv ‖ tag ‖ ciphertext). */
export function seal(key: Buffer, plain: string): string {
  const iv = crypto.randomBytes(12);
  const c = crypto.createCipheriv("aes-256-gcm", key, iv);
  const ct = Buffer.concat([c.update(plain, "utf8"), c.final()]);
  return Buffer.concat([iv, c.getAuthTag(), ct]).toString("base64");
}

export function open(key: Buffer, sealed: string): string {
  const b = Buffer.from(sealed, "base64");
  const d = crypto.createDecipheriv("aes-256-gcm", key, b.subarray(0, 12));
  d.setAuthTag(b.subarray(12, 28));
  return Buffer.concat([d.update(b.subarray(28)), d.final()]).toString("utf8");
}
