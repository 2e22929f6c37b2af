import crypto from "node:crypto";
import net from "node:net";
import type { CDPSession, Page } from "playwright-core";

/** A free loopback port (the relayer is started on it, so its passkey origin is known in advance). */
export async function freePort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((resolve) => s.listen(0, "127.0.0.1", resolve));
  const { port } = s.address() as net.AddressInfo;
  await new Promise<void>((resolve) => s.close(() => resolve()));
  return port;
}

export type Answer = { status: number; body: any };

/** A CTAP2 platform authenticator with resident keys and user verification, answering without a person. */
export async function addAuthenticator(cdp: CDPSession): Promise<string> {
  const { authenticatorId } = await cdp.send("WebAuthn.addVirtualAuthenticator", {
    options: { protocol: "ctap2", transport: "internal", hasResidentKey: true, hasUserVerification: true, isUserVerified: true, automaticPresenceSimulation: true },
  });
  return authenticatorId;
}

/** A P-256 private key as the DevTools protocol takes it (PKCS#8, base64). */
export const newPrivateKey = (): string =>
  crypto.generateKeyPairSync("ec", { namedCurve: "P-256" }).privateKey.export({ format: "der", type: "pkcs8" }).toString("base64");

/**
 * In the page: asks `optionsPath` for WebAuthn options, runs navigator.credentials.create or .get
 * with them (the browser and its authenticator do the ceremony), and posts the response to
 * `finishPath` as { response }, with `key` as X-Api-Key when given. Answers the final reply (or
 * the options' reply when it is not 200).
 */
export function ceremony(page: Page, api: string, kind: "create" | "get", optionsPath: string, finishPath: string, key?: string): Promise<Answer> {
  return page.evaluate(
    async ({ api, kind, optionsPath, finishPath, key }) => {
      const headers: Record<string, string> = { "content-type": "application/json" };
      if (key) headers["x-api-key"] = key;
      const b64u = (b: ArrayBuffer) => btoa(String.fromCharCode(...new Uint8Array(b))).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
      const bytes = (s: string) => Uint8Array.from(atob(s.replace(/-/g, "+").replace(/_/g, "/") + "===".slice((s.length + 3) % 4)), (c) => c.charCodeAt(0));
      const first = await fetch(api + optionsPath, { method: "POST", headers, body: "{}" });
      if (first.status !== 200) return { status: first.status, body: await first.json() };
      const o = (await first.json()).options;
      let response: unknown;
      if (kind === "create") {
        const c = (await navigator.credentials.create({
          publicKey: { ...o, challenge: bytes(o.challenge), user: { ...o.user, id: bytes(o.user.id) }, excludeCredentials: [] },
        })) as PublicKeyCredential;
        const r = c.response as AuthenticatorAttestationResponse;
        response = { id: c.id, rawId: b64u(c.rawId), type: c.type, clientExtensionResults: {}, response: { clientDataJSON: b64u(r.clientDataJSON), attestationObject: b64u(r.attestationObject), transports: r.getTransports() } };
      } else {
        const c = (await navigator.credentials.get({ publicKey: { ...o, challenge: bytes(o.challenge), allowCredentials: [] } })) as PublicKeyCredential;
        const r = c.response as AuthenticatorAssertionResponse;
        response = {
          id: c.id,
          rawId: b64u(c.rawId),
          type: c.type,
          clientExtensionResults: {},
          response: { clientDataJSON: b64u(r.clientDataJSON), authenticatorData: b64u(r.authenticatorData), signature: b64u(r.signature), userHandle: r.userHandle ? b64u(r.userHandle) : undefined },
        };
      }
      const done = await fetch(api + finishPath, { method: "POST", headers, body: JSON.stringify({ response }) });
      return { status: done.status, body: await done.json() };
    },
    { api, kind, optionsPath, finishPath, key },
  );
}

/**
 * An assertion made outside any browser with a credential's private key: for `rpId` and `origin`
 * of the caller's choosing (a foreign relying party), answering `challenge`.
 */
export function forgedAssertion(o: { credentialId: string; privateKey: string; userHandle: string; rpId: string; origin: string; challenge: string; counter: number }) {
  const key = crypto.createPrivateKey({ key: Buffer.from(o.privateKey, "base64"), format: "der", type: "pkcs8" });
  const counter = Buffer.alloc(4);
  counter.writeUInt32BE(o.counter);
  const authData = Buffer.concat([crypto.createHash("sha256").update(o.rpId).digest(), Buffer.from([0x05]), counter]); // UP and UV
  const clientDataJSON = Buffer.from(JSON.stringify({ type: "webauthn.get", challenge: o.challenge, origin: o.origin, crossOrigin: false }));
  const signature = crypto.sign(key.asymmetricKeyType === "ed25519" ? null : "sha256", Buffer.concat([authData, crypto.createHash("sha256").update(clientDataJSON).digest()]), key);
  return {
    id: o.credentialId,
    rawId: o.credentialId,
    type: "public-key",
    clientExtensionResults: {},
    response: { clientDataJSON: clientDataJSON.toString("base64url"), authenticatorData: authData.toString("base64url"), signature: signature.toString("base64url"), userHandle: o.userHandle },
  };
}
