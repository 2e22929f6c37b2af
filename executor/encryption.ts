import crypto from "node:crypto";

/** AES-256-GCM with a 12-byte random IV; the ciphertext is base64(iv ‖ ciphertext ‖ tag). */
export function encrypt(key: Uint8Array, message: string): string {
  const iv = crypto.randomBytes(12);
  const cipher = crypto.createCipheriv("aes-256-gcm", key, iv);
  const body = Buffer.concat([cipher.update(message, "utf8"), cipher.final()]);
  return Buffer.concat([iv, body, cipher.getAuthTag()]).toString("base64");
}

/** Reverses `encrypt`; throws a clear error when the ciphertext was altered or made with another key. */
export function decrypt(key: Uint8Array, ciphertext: string): string {
  const raw = Buffer.from(ciphertext, "base64");
  if (raw.length < 28 || raw.toString("base64") !== ciphertext.replace(/\s/g, "")) throw new Error("the ciphertext is not base64 of iv ‖ data ‖ tag");
  const decipher = crypto.createDecipheriv("aes-256-gcm", key, raw.subarray(0, 12));
  decipher.setAuthTag(raw.subarray(raw.length - 16));
  try {
    return Buffer.concat([decipher.update(raw.subarray(12, raw.length - 16)), decipher.final()]).toString("utf8");
  } catch {
    throw new Error("decryption failed: the ciphertext was altered or belongs to another wallet");
  }
}
