import crypto from "node:crypto";
import {
  generateAuthenticationOptions,
  generateRegistrationOptions,
  verifyAuthenticationResponse,
  verifyRegistrationResponse,
  type AuthenticationResponseJSON,
  type AuthenticatorTransportFuture,
  type PublicKeyCredentialCreationOptionsJSON,
  type PublicKeyCredentialRequestOptionsJSON,
  type RegistrationResponseJSON,
} from "@simplewebauthn/server";
import { AppError } from "../errors";
import { verifiedIdentity, type VerifiedIdentity } from "./identity";
import type { IdentityStore } from "./store";

/** The relying party passkeys are bound to (VESTA_PASSKEY_RP_ID, VESTA_PASSKEY_ORIGINS). */
export type PasskeyConfig = { rpId: string; origins: string[]; rpName: string };

/** How long a challenge waits for its response. */
export const CHALLENGE_TTL_MS = 5 * 60_000;
const KIND = "webauthn";

/** What a challenge is for; a response answers only a challenge issued for the same purpose (and identity, when linking). */
type Purpose = { for: "register"; userHandle: string } | { for: "link"; userHandle: string; identityId: string } | { for: "authenticate" };

const invalid = (message: string) => new AppError(401, "invalid_passkey", message);

/**
 * Passkey sign-in (WebAuthn, @simplewebauthn/server). Registration: the server makes the user
 * handle (32 random bytes), so the passkey's identity ("passkey", rp id, user handle) comes from
 * what this node generated, never from what the client sends. Challenges live in the identity
 * store (every replica sees them) for CHALLENGE_TTL_MS, bound to their purpose (and, for a link,
 * to the identity), and are taken once by a conditional delete. Assertions check the signature,
 * origin, rp id and user presence, and move the credential's counter forward by a conditional
 * update: a counter that does not move forward (a cloned authenticator) is refused, as is the
 * second of two assertions racing with one counter value.
 */
export class Passkeys {
  constructor(
    private readonly store: IdentityStore,
    readonly config: PasskeyConfig,
    /** HMAC under a key only the TEE derives: challenges' bindings and stored credentials carry one, so rows written behind the service's back are refused. */
    private readonly mac: (fields: string) => Promise<string>,
  ) {}

  private credentialMac(p: { credential_id: string; rp_id: string; user_handle: string; public_key: string }): Promise<string> {
    return this.mac(JSON.stringify(["vesta-passkey-v1", p.credential_id, p.rp_id, p.user_handle, p.public_key]));
  }

  private async macHolds(given: string, expected: Promise<string>): Promise<boolean> {
    const e = Buffer.from(await expected);
    const g = Buffer.from(given);
    return g.length === e.length && crypto.timingSafeEqual(g, e);
  }

  private async challenge(purpose: Purpose): Promise<string> {
    const challenge = crypto.randomBytes(32).toString("base64url");
    const body = JSON.stringify(purpose);
    await this.store.put(KIND, `${purpose.for}:${challenge}`, `${await this.mac(`${challenge}\n${body}`)}.${body}`, Date.now() + CHALLENGE_TTL_MS);
    return challenge;
  }

  /** Takes the challenge a response carries, if it was issued for `purpose` and is unexpired: what it was bound to. */
  private async take(clientDataJSON: unknown, purpose: Purpose["for"]): Promise<Purpose> {
    let challenge: unknown;
    try {
      challenge = JSON.parse(Buffer.from(String(clientDataJSON), "base64url").toString("utf8")).challenge;
    } catch {
      throw invalid("response.clientDataJSON is not base64url JSON");
    }
    if (typeof challenge !== "string" || !/^[A-Za-z0-9_-]{43}$/.test(challenge)) throw invalid("the response carries no challenge issued by this node");
    const body = await this.store.take(KIND, `${purpose}:${challenge}`);
    if (body === undefined) throw invalid(`the response's challenge is not a pending ${purpose === "authenticate" ? "sign-in" : "registration"} challenge of this node (never issued, expired, or used): ask for new options`);
    const dot = body.indexOf(".");
    const bound = body.slice(dot + 1);
    if (dot < 0 || !(await this.macHolds(body.slice(0, dot), this.mac(`${challenge}\n${bound}`)))) throw invalid("the response's challenge was not issued by this node");
    return JSON.parse(bound) as Purpose;
  }

  /** Options for navigator.credentials.create: a new passkey, for a new identity or (identityId) to link to one. */
  async registrationOptions(identityId?: string): Promise<PublicKeyCredentialCreationOptionsJSON> {
    const userHandle = crypto.randomBytes(32).toString("base64url");
    const purpose: Purpose = identityId ? { for: "link", userHandle, identityId } : { for: "register", userHandle };
    const challenge = await this.challenge(purpose);
    return generateRegistrationOptions({
      rpName: this.config.rpName,
      rpID: this.config.rpId,
      userName: `vesta-${userHandle.slice(0, 8)}`,
      userDisplayName: "Vesta account",
      userID: Buffer.from(userHandle, "base64url"),
      challenge: Buffer.from(challenge, "base64url"), // bytes: a string would be taken as UTF-8 and encoded again
      timeout: CHALLENGE_TTL_MS,
      attestationType: "none",
      authenticatorSelection: { residentKey: "required", userVerification: "preferred" },
    });
  }

  /**
   * Verifies a registration response, stores the passkey and returns its identity. `identityId`:
   * the session's identity when linking (the challenge must have been issued to it).
   */
  async register(response: RegistrationResponseJSON, identityId?: string): Promise<VerifiedIdentity> {
    const purpose = await this.take(response?.response?.clientDataJSON, identityId ? "link" : "register");
    if (purpose.for === "link" && purpose.identityId !== identityId) throw new AppError(401, "invalid_passkey", "these registration options were issued to another identity's session: nothing was registered");
    if (purpose.for === "authenticate") throw invalid("not a registration challenge");
    let result;
    try {
      result = await verifyRegistrationResponse({ response, expectedChallenge: () => true, expectedOrigin: this.config.origins, expectedRPID: this.config.rpId, requireUserVerification: false });
    } catch (err) {
      throw invalid(`the registration does not verify: ${(err as Error).message}`);
    }
    if (!result.verified) throw invalid("the registration does not verify");
    const c = result.registrationInfo.credential;
    const now = Date.now();
    const fields = { credential_id: c.id, rp_id: this.config.rpId, user_handle: purpose.userHandle, public_key: Buffer.from(c.publicKey).toString("base64url") };
    const added = await this.store.addPasskey({
      ...fields,
      mac: await this.credentialMac(fields),
      counter: c.counter,
      transports: JSON.stringify(c.transports ?? []),
      created_at: now,
      used_at: now,
    });
    if (!added) throw new AppError(409, "already_exists", "this credential is registered already: sign in with it");
    return verifiedIdentity("passkey", this.config.rpId, purpose.userHandle);
  }

  /** Options for navigator.credentials.get (a discoverable credential: no list of ids is sent). */
  async authenticationOptions(): Promise<PublicKeyCredentialRequestOptionsJSON> {
    const challenge = await this.challenge({ for: "authenticate" });
    return generateAuthenticationOptions({ rpID: this.config.rpId, challenge: Buffer.from(challenge, "base64url"), timeout: CHALLENGE_TTL_MS, userVerification: "preferred" });
  }

  /** Verifies an assertion of a registered passkey: its identity. */
  async authenticate(response: AuthenticationResponseJSON): Promise<VerifiedIdentity> {
    await this.take(response?.response?.clientDataJSON, "authenticate");
    const id = typeof response?.id === "string" && response.id.length <= 1400 ? response.id : "";
    const stored = id ? await this.store.passkey(id) : undefined;
    if (!stored || stored.rp_id !== this.config.rpId) throw invalid("this passkey is not registered on this node: register it first");
    if (!(await this.macHolds(stored.mac, this.credentialMac(stored)))) throw invalid("this passkey's record does not verify (it was not written by this service): it signs into nothing");
    const handle = response.response.userHandle;
    if (handle !== undefined && handle !== stored.user_handle) throw invalid("the assertion's user handle is not the one this passkey was registered with");
    let result;
    try {
      result = await verifyAuthenticationResponse({
        response,
        expectedChallenge: () => true, // taken above: issued by this node, for a sign-in, unexpired, once
        expectedOrigin: this.config.origins,
        expectedRPID: this.config.rpId,
        credential: { id: stored.credential_id, publicKey: Buffer.from(stored.public_key, "base64url"), counter: stored.counter, transports: JSON.parse(stored.transports) as AuthenticatorTransportFuture[] },
        requireUserVerification: false,
      });
    } catch (err) {
      const message = (err as Error).message;
      if (/counter/i.test(message)) throw new AppError(401, "passkey_cloned", `refused: the authenticator's signature counter did not move forward (${message}); the credential may have been cloned`);
      throw invalid(`the assertion does not verify: ${message}`);
    }
    if (!result.verified) throw invalid("the assertion's signature does not verify");
    const next = result.authenticationInfo.newCounter;
    if (!(await this.store.advanceCounter(stored.credential_id, stored.counter, next))) {
      throw new AppError(401, "passkey_cloned", "refused: another assertion of this passkey with the same counter was taken first; the credential may have been cloned");
    }
    return verifiedIdentity("passkey", this.config.rpId, stored.user_handle);
  }
}
