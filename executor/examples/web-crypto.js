// crypto: random values, UUIDs and crypto.subtle (digests, HMAC, ECDSA P-256, AES-GCM, raw and
// JWK keys), as Web Crypto has them.
async function main({ message = "hello" }) {
  const data = new TextEncoder().encode(message);
  const hex = (buf) => Array.from(new Uint8Array(buf), (b) => b.toString(16).padStart(2, "0")).join("");
  const digests = {};
  for (const alg of ["SHA-1", "SHA-256", "SHA-384", "SHA-512"]) digests[alg] = hex(await crypto.subtle.digest(alg, data));

  const hmacKey = await crypto.subtle.importKey("raw", new TextEncoder().encode("secret"), { name: "HMAC", hash: "SHA-256" }, true, ["sign", "verify"]);
  const mac = await crypto.subtle.sign("HMAC", hmacKey, data);
  const hmac = { mac: hex(mac), verified: await crypto.subtle.verify("HMAC", hmacKey, mac, data), jwk: (await crypto.subtle.exportKey("jwk", hmacKey)).k };

  const ec = await crypto.subtle.generateKey({ name: "ECDSA", namedCurve: "P-256" }, true, ["sign", "verify"]);
  const signature = await crypto.subtle.sign({ name: "ECDSA", hash: "SHA-256" }, ec.privateKey, data);
  const rawPublic = await crypto.subtle.exportKey("raw", ec.publicKey);
  const imported = await crypto.subtle.importKey("raw", rawPublic, { name: "ECDSA", namedCurve: "P-256" }, true, ["verify"]);
  const ecdsa = { signatureBytes: signature.byteLength, publicKeyBytes: rawPublic.byteLength, verified: await crypto.subtle.verify({ name: "ECDSA", hash: "SHA-256" }, imported, signature, data) };

  const aesKey = await crypto.subtle.importKey("jwk", await crypto.subtle.exportKey("jwk", await crypto.subtle.generateKey({ name: "AES-GCM", length: 256 }, true, ["encrypt", "decrypt"])), "AES-GCM", false, ["encrypt", "decrypt"]);
  const iv = crypto.getRandomValues(new Uint8Array(12));
  const sealed = await crypto.subtle.encrypt({ name: "AES-GCM", iv }, aesKey, data);
  const aes = { sealedBytes: sealed.byteLength, opened: new TextDecoder().decode(await crypto.subtle.decrypt({ name: "AES-GCM", iv }, aesKey, sealed)), extractable: aesKey.extractable };

  return { digests, hmac, ecdsa, aes, uuid: /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/.test(crypto.randomUUID()) };
}
