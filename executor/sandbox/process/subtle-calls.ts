/**
 * crypto.subtle behind the guest (guest/crypto.js): Node's own Web Crypto, run in the sandbox
 * process (no secret of the relayer's: the keys are those the action made or imported). The guest
 * holds each CryptoKey's material as a JWK it never shows the action (unless exported), and sends
 * it with every operation; this side imports it again, so nothing of a run is kept here.
 *
 * Supported: digest (SHA-1, SHA-256, SHA-384, SHA-512); HMAC, ECDSA and AES-GCM keys: generateKey,
 * importKey and exportKey (raw and jwk), sign/verify (HMAC, ECDSA), encrypt/decrypt (AES-GCM).
 * Anything else is a NotSupportedError. Arguments are tagged JSON text (tagged-json.ts), bounded like
 * the ethers shim's (ethers-bounds.ts: half the run's memory) before they are parsed; a generated
 * HMAC key is at most MAX_KEY_BITS long.
 */
import { webcrypto } from "node:crypto";
import { SandboxLimitError } from "../errors";
import type { RunLimits } from "../types";
import { checkArgs, checkArgsText } from "./ethers-bounds";
import { decodeTagged, encodeTagged } from "./tagged-json";

const { subtle } = webcrypto;
type Obj = Record<string, unknown>;

export const SUBTLE_OPS = ["digest", "importKey", "generateKey", "exportKey", "sign", "verify", "encrypt", "decrypt"] as const;
const DIGESTS = new Set(["SHA-1", "SHA-256", "SHA-384", "SHA-512"]);
const KEY_ALGORITHMS = new Set(["HMAC", "ECDSA", "AES-GCM"]);
const FORMATS = new Set(["raw", "jwk"]);
const JWK_FIELDS = ["kty", "k", "crv", "x", "y", "d", "alg"];
/** The longest HMAC key generateKey makes (bits). */
export const MAX_KEY_BITS = 8192;

/** A DOMException-like error the guest rethrows under the same name. */
const domError = (name: string, message: string) => Object.assign(new Error(message), { name });
const notSupported = (what: string) => domError("NotSupportedError", `${what} is not supported in the sandbox (digest: SHA-1/256/384/512; keys: HMAC, ECDSA, AES-GCM; formats: raw, jwk)`);

const isObj = (v: unknown): v is Obj => v !== null && typeof v === "object" && !Array.isArray(v) && !(v instanceof Uint8Array);
const nameOf = (alg: unknown): string => (typeof alg === "string" ? alg : isObj(alg) && typeof alg.name === "string" ? alg.name : "").toUpperCase();

/** Only the fields Web Crypto reads, each of the type it takes. */
function algorithm(alg: unknown, allowed: ReadonlySet<string>): Obj {
  const name = nameOf(alg);
  if (!allowed.has(name)) throw notSupported(`the algorithm ${JSON.stringify(String(isObj(alg) ? alg.name : alg)).slice(0, 60)}`);
  const out: Obj = { name };
  if (!isObj(alg)) return out;
  if (alg.hash !== undefined) {
    const hash = nameOf(alg.hash);
    if (!DIGESTS.has(hash)) throw notSupported(`the hash ${JSON.stringify(String(isObj(alg.hash) ? alg.hash.name : alg.hash)).slice(0, 60)}`);
    out.hash = hash;
  }
  for (const key of ["length", "tagLength"]) if (typeof alg[key] === "number") out[key] = alg[key];
  if (typeof alg.namedCurve === "string") out.namedCurve = alg.namedCurve;
  for (const key of ["iv", "additionalData"]) if (alg[key] instanceof Uint8Array) out[key] = alg[key];
  if (name === "HMAC" && typeof out.length === "number" && out.length > MAX_KEY_BITS) throw domError("OperationError", `HMAC keys are at most ${MAX_KEY_BITS} bits here`);
  return out;
}

const usages = (v: unknown): webcrypto.KeyUsage[] => (Array.isArray(v) ? v.filter((u): u is webcrypto.KeyUsage => typeof u === "string") : []);
const format = (v: unknown): "raw" | "jwk" => {
  if (typeof v !== "string" || !FORMATS.has(v)) throw notSupported(`the key format ${JSON.stringify(String(v)).slice(0, 30)}`);
  return v as "raw" | "jwk";
};
function bytes(v: unknown, what: string): Uint8Array {
  if (!(v instanceof Uint8Array)) throw new TypeError(`${what} must be an ArrayBuffer or an ArrayBufferView`);
  return v;
}
function jwkOf(v: unknown): webcrypto.JsonWebKey {
  if (!isObj(v)) throw new TypeError("a JWK must be an object");
  return Object.fromEntries(JWK_FIELDS.filter((f) => typeof v[f] === "string").map((f) => [f, v[f]]));
}

/** What the guest keeps of a key: its material (a JWK without ext/key_ops) and what it is. */
async function described(key: webcrypto.CryptoKey): Promise<Obj> {
  const { algorithm: alg } = key as unknown as { algorithm: Obj };
  const plain: Obj = { name: alg.name };
  if (isObj(alg.hash)) plain.hash = { name: alg.hash.name };
  if (typeof alg.length === "number") plain.length = alg.length;
  if (typeof alg.namedCurve === "string") plain.namedCurve = alg.namedCurve;
  const { ext: _e, key_ops: _k, ...jwk } = await subtle.exportKey("jwk", key); // made extractable here; the guest keeps the action's choice
  return { type: key.type, algorithm: plain, usages: key.usages, jwk };
}

/** A guest key (its JWK and what it is) as a Node CryptoKey, with the action's extractable and usages. */
function keyOf(v: unknown): Promise<webcrypto.CryptoKey> {
  if (!isObj(v) || !isObj(v.algorithm)) throw new TypeError("the key must be a CryptoKey");
  return subtle.importKey("jwk", jwkOf(v.jwk), algorithm(v.algorithm, KEY_ALGORITHMS) as never, v.extractable === true, usages(v.usages));
}

const OPS: Record<(typeof SUBTLE_OPS)[number], (a: Obj) => Promise<unknown>> = {
  digest: async (a) => new Uint8Array(await subtle.digest(algorithm(a.algorithm, DIGESTS) as never, bytes(a.data, "data"))),
  importKey: async (a) => {
    const fmt = format(a.format);
    const data = fmt === "jwk" ? jwkOf(a.keyData) : bytes(a.keyData, "keyData");
    return described(await subtle.importKey(fmt as never, data as never, algorithm(a.algorithm, KEY_ALGORITHMS) as never, true, usages(a.usages)));
  },
  generateKey: async (a) => {
    const made = await subtle.generateKey(algorithm(a.algorithm, KEY_ALGORITHMS) as never, true, usages(a.usages));
    if ("privateKey" in made) return { privateKey: await described(made.privateKey), publicKey: await described(made.publicKey) };
    return described(made as webcrypto.CryptoKey);
  },
  exportKey: async (a) => {
    const fmt = format(a.format);
    const key = await keyOf(a.key);
    const out = fmt === "jwk" ? await subtle.exportKey("jwk", key) : await subtle.exportKey("raw", key);
    return out instanceof ArrayBuffer ? new Uint8Array(out) : out;
  },
  sign: async (a) => new Uint8Array(await subtle.sign(algorithm(a.algorithm, KEY_ALGORITHMS) as never, await keyOf(a.key), bytes(a.data, "data"))),
  verify: async (a) => subtle.verify(algorithm(a.algorithm, KEY_ALGORITHMS) as never, await keyOf(a.key), bytes(a.signature, "signature"), bytes(a.data, "data")),
  encrypt: async (a) => new Uint8Array(await subtle.encrypt(algorithm(a.algorithm, KEY_ALGORITHMS) as never, await keyOf(a.key), bytes(a.data, "data"))),
  decrypt: async (a) => new Uint8Array(await subtle.decrypt(algorithm(a.algorithm, KEY_ALGORITHMS) as never, await keyOf(a.key), bytes(a.data, "data"))),
};

/**
 * Runs one crypto.subtle operation: `argsJson` one tagged JSON object. Resolves tagged JSON; rejects
 * with SandboxLimitError("memoryBytes") for arguments past what a run may hand this process, or an
 * error named as Web Crypto names it (TypeError, NotSupportedError, DataError, OperationError,
 * InvalidAccessError, SyntaxError).
 */
export async function callSubtle(op: string, argsJson: string, limits: RunLimits): Promise<string> {
  const run = (SUBTLE_OPS as readonly string[]).includes(op) ? OPS[op as (typeof SUBTLE_OPS)[number]] : undefined;
  if (!run) throw new TypeError(`crypto.subtle.${op} is not supported in the sandbox`);
  try {
    checkArgsText(argsJson, limits);
    const args = decodeTagged(argsJson);
    if (!isObj(args)) throw new TypeError("arguments must be an object");
    checkArgs(`subtle.${op}`, [args], limits);
    return encodeTagged(await run(args));
  } catch (err) {
    if (err instanceof SandboxLimitError) throw new SandboxLimitError(err.limit, `crypto.subtle.${op}: ${err.message}`);
    const e = err as Error;
    throw domError(typeof e?.name === "string" && /^[A-Z][A-Za-z]{0,40}Error$/.test(e.name) ? e.name : "OperationError", `crypto.subtle.${op}: ${e?.message ?? String(err)}`);
  }
}
