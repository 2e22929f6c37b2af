import type { Logger } from "pino";
import { AppError } from "../errors";
import crypto from "node:crypto";
import { paths, type KeyProvider, type DerivedWallet } from "../../executor/keys/provider";
import { Lru } from "../../protocol/lru";
import { hex32 } from "../../protocol/usageKeyShape";
import type { IdentityConfig } from "./config";
import { identityAccountHash, identityId, identityWallet, type IdentityMethod, type VerifiedIdentity } from "./identity";
import { Sessions, type IdentitySession } from "./session";
import { OidcVerifier } from "./oidc";
import { EMAIL_CODE_DEFAULTS, EmailCodes } from "./emailCodes";
import { Passkeys } from "./passkeys";
import { codeMailer } from "./mailer";
import { IdentityStore } from "./store";

/** An identity session's account, as a route sees it (Auth.identity). */
export type IdentityAuth = { identityId: string; wallet: string; method: IdentityMethod };

/** Identity sign-in: the verifiers of each method, the sessions, the store, and the identity wallets' addresses. */
export class Identity {
  readonly sessions: Sessions;
  readonly oidc: OidcVerifier;
  readonly email?: EmailCodes;
  readonly passkeys?: Passkeys;
  /** Identity id -> owner wallet address (addresses only: the key is derived again for each write). */
  private readonly addresses = new Lru<string, string>(10_000);

  constructor(
    private readonly keys: KeyProvider,
    readonly store: IdentityStore,
    readonly config: IdentityConfig,
    deployment: string,
    logger: Logger,
  ) {
    this.sessions = new Sessions(keys, deployment, config.sessionSeconds);
    let linkKey: Promise<Uint8Array> | undefined;
    const mac = async (fields: string) => {
      linkKey ??= keys.deriveSecret(paths.identityMac("method-link"));
      return crypto.createHmac("sha256", await linkKey).update(fields).digest("base64url");
    };
    store.useLinkMac(mac); // every field is tagged with its kind (link, passkey, challenge), so one key serves them apart
    this.oidc = new OidcVerifier(keys, store, config.oidc);
    const mailer = codeMailer(config, EMAIL_CODE_DEFAULTS.ttlMs / 60_000, logger);
    if (mailer) this.email = new EmailCodes(keys, store, { ...EMAIL_CODE_DEFAULTS, perHour: config.emailCodesPerHour }, mailer);
    if (config.passkey) this.passkeys = new Passkeys(store, config.passkey, (fields) => mac(`passkey\n${fields}`));
  }

  /** The owner wallet address of an identity id. */
  async walletAddress(id: string): Promise<string> {
    let a = this.addresses.get(id);
    if (a === undefined) {
      a = (await identityWallet(this.keys, id)).address;
      this.addresses.set(id, a);
    }
    return a;
  }

  /** The owner wallet with its key, for one write of the identity's account (sendAsOwner). */
  signer(identityId: string): Promise<DerivedWallet> {
    return identityWallet(this.keys, identityId);
  }

  /** The id, wallet and account of an identity id. */
  async ofId(id: string): Promise<{ id: string; wallet: string; accountHash: bigint }> {
    const wallet = await this.walletAddress(id);
    return { id, wallet, accountHash: identityAccountHash(wallet) };
  }

  /**
   * The identity a verified method signs into (nothing recorded): the identity it was linked to,
   * else its own (the id derived from it). 403 method_unlinked when it was unlinked.
   */
  async resolve(identity: VerifiedIdentity): Promise<{ id: string; wallet: string; accountHash: bigint }> {
    const row = await this.store.link(identity.method, identity.issuer, identity.subject);
    if (row?.unlinked) throw unlinked();
    return this.ofId(row?.identity_id ?? identityId(identity));
  }

  /**
   * As resolve, and records the method's identity on its first sign-in (a link made meanwhile
   * wins); with the identity's session epoch for the session it signs into. The link is read again
   * after the epoch: an unlink (which flags the link and bumps the epoch in one transaction) that
   * committed before the epoch was read is seen there, one after it left `epoch` behind, so no
   * session of an unlinked method outlives its unlink.
   */
  async claim(identity: VerifiedIdentity): Promise<{ id: string; wallet: string; accountHash: bigint; epoch: number }> {
    const found = await this.store.link(identity.method, identity.issuer, identity.subject);
    const row = found ?? (await this.store.claim(identity.method, identity.issuer, identity.subject, identityId(identity)));
    if (row.unlinked) throw unlinked();
    const epoch = await this.store.epoch(row.identity_id);
    const again = await this.store.link(identity.method, identity.issuer, identity.subject);
    if (!again || again.unlinked || again.identity_id !== row.identity_id) throw unlinked();
    return { ...(await this.ofId(row.identity_id)), epoch };
  }

  /**
   * The session a token proves, if it still holds: signed by this node, unexpired, and issued at the
   * identity's current epoch (401 invalid_session otherwise: an unlink since revoked it). The epoch
   * is read from the shared store on every use, so a revocation holds at once on every replica.
   */
  async session(token: string): Promise<IdentitySession> {
    const s = await this.sessions.verify(token);
    if (s.epoch !== (await this.store.epoch(s.identityId))) throw revoked();
    return s;
  }

  /** The identity and account a session token names (401 invalid_session when it does not hold). */
  async fromSession(token: string): Promise<IdentitySession & IdentityAuth & { accountHash: bigint }> {
    const s = await this.session(token);
    const wallet = await this.walletAddress(s.identityId);
    return { ...s, wallet, accountHash: identityAccountHash(wallet) };
  }
}

/** 401 invalid_session: an unlink since the session was issued revoked it. */
export const revoked = () => new AppError(401, "invalid_session", "this session was revoked (a sign-in method of its identity was unlinked since): sign in again");

const unlinked = () => new AppError(403, "method_unlinked", "this sign-in method was unlinked from its identity: sign in with another of the identity's methods (and link it again)");

/** 403 identity_not_owner: the identity's wallet is not (or no longer) the account's admin. */
export const notOwner = (accountHash: bigint) =>
  new AppError(403, "identity_not_owner", `this identity's wallet is not the admin of account ${hex32(accountHash)} (it was handed over): it signs nothing for it`);
