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
const used = () => invalid("the response's challenge was used already (a challenge signs in once): ask for new options");

/**
 * Passkey sign-in (WebAuthn, @simplewebauthn/server). Registration: the server makes the user
 * handle (32 random bytes), so the passkey's identity ("passkey", rp id, user handle) comes from
 * what this node generated, never from what the client sends. Challenges are stateless: each
 * carries its purpose (and, for a link, the identity), its expiry (CHALLENGE_TTL_MS) and an HMAC
 * under a key only the TEE derives; one is recorded in the identity store (every replica sees it)
 * only when a response to it verified, so it is used once. Assertions check the signature,
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

  /**
   * A challenge that carries what it is for: UTF-8 of `v1.<random>.<expiry ms>.<purpose, base64url
   * JSON>.<HMAC>`, as bytes. Nothing is stored when it is issued: a stranger asking a million times
   * fills no table and locks nobody out. It is marked used (in the store, every replica sees it)
   * only once a response to it has verified (see spend).
   */
  private async challenge(purpose: Purpose): Promise<string> {
    const body = `v1.${crypto.randomBytes(18).toString("base64url")}.${Date.now() + CHALLENGE_TTL_MS}.${Buffer.from(JSON.stringify(purpose)).toString("base64url")}`;
    return Buffer.from(`${body}.${await this.mac(`webauthn-challenge\n${body}`)}`).toString("base64url");
  }

  /**
   * The challenge a response carries, if this node issued it for `purpose` and it is unexpired:
   * what it was bound to, and the key that spends it. Nothing is taken yet.
   */
  private async open(clientDataJSON: unknown, purpose: Purpose["for"]): Promise<{ bound: Purpose; key: string; expiresAt: number }> {
    let challenge: unknown;
    try {
      challenge = JSON.parse(Buffer.from(String(clientDataJSON).slice(0, 4096), "base64url").toString("utf8")).challenge;
    } catch {
      throw invalid("response.clientDataJSON is not base64url JSON");
    }
    const notOurs = () => invalid("the response carries no challenge issued by this node");
    if (typeof challenge !== "string" || challenge.length > 1024 || !/^[A-Za-z0-9_-]+$/.test(challenge)) throw notOurs();
    const parts = Buffer.from(challenge, "base64url").toString("utf8").split(".");
    if (parts.length !== 5 || parts[0] !== "v1") throw notOurs();
    const body = parts.slice(0, 4).join(".");
    if (!(await this.macHolds(parts[4], this.mac(`webauthn-challenge\n${body}`)))) throw invalid("the response's challenge was not issued by this node");
    const expiresAt = Number(parts[2]);
    if (!(expiresAt > Date.now())) throw invalid("the response's challenge has expired: ask for new options");
    const bound = JSON.parse(Buffer.from(parts[3], "base64url").toString("utf8")) as Purpose;
    if (bound.for !== purpose) throw invalid(`the response's challenge is not a ${purpose === "authenticate" ? "sign-in" : "registration"} challenge (a challenge answers only the purpose it was issued for): ask for new options`);
    const key = `${purpose}:${parts[1]}`;
    if (await this.store.peek(KIND, key)) throw used(); // a replay is told so before any verification (spend decides races)
    return { bound, key, expiresAt };
  }

  /** Marks a challenge whose response verified as used (single use; of two racing, one gets it). */
  private async spend(c: { key: string; expiresAt: number }): Promise<void> {
    if (!(await this.store.once(KIND, c.key, c.expiresAt))) throw used();
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
    const c = await this.open(response?.response?.clientDataJSON, identityId ? "link" : "register");
    const purpose = c.bound;
    if (purpose.for === "link" && purpose.identityId !== identityId) throw new AppError(401, "invalid_passkey", "these registration options were issued to another identity's session: nothing was registered");
    if (purpose.for === "authenticate") throw invalid("not a registration challenge");
    let result;
    try {
      result = await verifyRegistrationResponse({ response, expectedChallenge: () => true /* opened above, spent below once verified */, expectedOrigin: this.config.origins, expectedRPID: this.config.rpId, requireUserVerification: false });
    } catch (err) {
      throw invalid(`the registration does not verify: ${(err as Error).message}`);
    }
    if (!result.verified) throw invalid("the registration does not verify");
    await this.spend(c);
    const cred = result.registrationInfo.credential;
    const now = Date.now();
    const fields = { credential_id: cred.id, rp_id: this.config.rpId, user_handle: purpose.userHandle, public_key: Buffer.from(cred.publicKey).toString("base64url") };
    const added = await this.store.addPasskey({
      ...fields,
      mac: await this.credentialMac(fields),
      counter: cred.counter,
      transports: JSON.stringify(cred.transports ?? []),
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
    const challenge = await this.open(response?.response?.clientDataJSON, "authenticate");
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
        expectedChallenge: () => true, // opened above: issued by this node, for a sign-in, unexpired (spent below, once verified)
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
    await this.spend(challenge);
    const next = result.authenticationInfo.newCounter;
    if (!(await this.store.advanceCounter(stored.credential_id, stored.counter, next))) {
      throw new AppError(401, "passkey_cloned", "refused: another assertion of this passkey with the same counter was taken first; the credential may have been cloned");
    }
    return verifiedIdentity("passkey", this.config.rpId, stored.user_handle);
  }
}
