import type { Logger } from "pino";
import { AppError } from "../errors";
import type { KeyProvider, DerivedWallet } from "../../executor/keys/provider";
import { Lru } from "../../protocol/lru";
import { hex32 } from "../../protocol/usageKeyShape";
import type { IdentityConfig } from "./config";
import { identityAccountHash, identityId, identityWallet, type IdentityMethod, type VerifiedIdentity } from "./identity";
import { Sessions, type IdentitySession } from "./session";
import { OidcVerifier } from "./oidc";
import { EMAIL_CODE_DEFAULTS, EmailCodes } from "./emailCodes";

/** An identity session's account, as a route sees it (Auth.identity). */
export type IdentityAuth = { identityId: string; wallet: string; method: IdentityMethod };

/** Identity sign-in: the verifiers of each method, the sessions, and the identity wallets' addresses. */
export class Identity {
  readonly sessions: Sessions;
  readonly oidc: OidcVerifier;
  readonly email?: EmailCodes;
  /** Identity id -> owner wallet address (addresses only: the key is derived again for each write). */
  private readonly addresses = new Lru<string, string>(10_000);

  constructor(
    private readonly keys: KeyProvider,
    readonly config: IdentityConfig,
    deployment: string,
    logger: Logger,
  ) {
    this.sessions = new Sessions(keys, deployment, config.sessionSeconds);
    this.oidc = new OidcVerifier(keys, config.oidc);
    if (config.email === "log") {
      // The development mailer: the code in the log, as the triggers service prints its sign-in links.
      this.email = new EmailCodes(keys, { ...EMAIL_CODE_DEFAULTS, perHour: config.emailCodesPerHour }, (email, code) =>
        logger.info({ email }, `sign-in code for ${email}: ${code} (development mailer: VESTA_EMAIL_CODES=log)`),
      );
    }
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

  /** The id, wallet and account of a verified identity. */
  async resolve(identity: VerifiedIdentity): Promise<{ id: string; wallet: string; accountHash: bigint }> {
    const id = identityId(identity);
    const wallet = await this.walletAddress(id);
    return { id, wallet, accountHash: identityAccountHash(wallet) };
  }

  /** The identity and account a session token names (401 invalid_session when it does not hold). */
  async fromSession(token: string): Promise<IdentitySession & IdentityAuth & { accountHash: bigint }> {
    const s = await this.sessions.verify(token);
    const wallet = await this.walletAddress(s.identityId);
    return { ...s, wallet, accountHash: identityAccountHash(wallet) };
  }
}

/** 403 identity_not_owner: the identity's wallet is not (or no longer) the account's admin. */
export const notOwner = (accountHash: bigint) =>
  new AppError(403, "identity_not_owner", `this identity's wallet is not the admin of account ${hex32(accountHash)} (it was handed over): it signs nothing for it`);
