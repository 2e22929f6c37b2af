import { hasColumn, type StoreSchema } from "../../storage";

/** The identity store's tables, as its queries see them (both databases). */
export type IdentityDb = {
  /**
   * Pending single-use things, each until `expires_at` (ms): e-mail codes (kind "email", key the
   * address and the client that asked, `address\nclient`: one pending per pair, checked only for
   * that client; body the code's HMAC), used OpenID nonces (kind "oidc-nonce") and used WebAuthn
   * challenges (kind "webauthn"). `client`: who asked for a pending code (its per-client quota).
   */
  identity_once: { kind: string; key: string; body: string; expires_at: number; attempts: number; client: string };
  /** Codes sent per mailbox (the hourly budget), kept an hour; `client`: who asked (its share of the budget; "" before 0003). */
  identity_sends: { mailbox: string; sent_at: number; id: string; client: string };
  /** Registered passkeys: the credential's public key (COSE, base64url), its signature counter, and an HMAC binding id, rp id, user handle and key. */
  identity_passkeys: { credential_id: string; rp_id: string; user_handle: string; public_key: string; counter: number; transports: string; created_at: number; used_at: number; mac: string };
  /**
   * Which identity a sign-in method signs into, once it was used or linked. A method with no row
   * signs into its own identity (the id derived from it). `unlinked` 1: it signs into nothing.
   * `mac`: an HMAC of the row (method, issuer, subject, identity, unlinked) under a key the TEE
   * derives: a row written behind the service's back (an operator pointing a method at another
   * identity) does not verify and signs into nothing.
   */
  identity_links: { method: string; issuer: string; subject: string; identity_id: string; linked_at: number; unlinked: number | boolean; mac: string };
  /**
   * Each identity's session epoch (no row: 0). Sessions carry the epoch they were issued at and
   * hold only while it is still the identity's: an unlink bumps it, so every session issued before
   * (the unlinked method's among them) stops working at once, on every replica.
   */
  identity_epochs: { identity_id: string; epoch: number };
};

export const IDENTITY_SCHEMA: StoreSchema = {
  name: "identity",
  steps: {
    "0001_initial": async (db, { columns: t }) => {
      await db.schema.createTable("identity_once").ifNotExists()
        .addColumn("kind", "text", (c) => c.notNull())
        .addColumn("key", "text", (c) => c.notNull())
        .addColumn("body", "text", (c) => c.notNull())
        .addColumn("expires_at", t.int, (c) => c.notNull())
        .addColumn("attempts", t.int, (c) => c.notNull())
        .addPrimaryKeyConstraint("identity_once_pkey", ["kind", "key"])
        .execute();
      await db.schema.createIndex("identity_once_expiry").ifNotExists().on("identity_once").column("expires_at").execute();
      await db.schema.createTable("identity_sends").ifNotExists()
        .addColumn("id", "text", (c) => c.primaryKey())
        .addColumn("mailbox", "text", (c) => c.notNull())
        .addColumn("sent_at", t.int, (c) => c.notNull())
        .execute();
      await db.schema.createIndex("identity_sends_mailbox").ifNotExists().on("identity_sends").columns(["mailbox", "sent_at"]).execute();
      await db.schema.createTable("identity_passkeys").ifNotExists()
        .addColumn("credential_id", "text", (c) => c.primaryKey())
        .addColumn("rp_id", "text", (c) => c.notNull())
        .addColumn("user_handle", "text", (c) => c.notNull())
        .addColumn("public_key", "text", (c) => c.notNull())
        .addColumn("counter", t.int, (c) => c.notNull())
        .addColumn("transports", "text", (c) => c.notNull())
        .addColumn("created_at", t.int, (c) => c.notNull())
        .addColumn("used_at", t.int, (c) => c.notNull())
        .addColumn("mac", "text", (c) => c.notNull())
        .execute();
      await db.schema.createTable("identity_links").ifNotExists()
        .addColumn("method", "text", (c) => c.notNull())
        .addColumn("issuer", "text", (c) => c.notNull())
        .addColumn("subject", "text", (c) => c.notNull())
        .addColumn("identity_id", "text", (c) => c.notNull())
        .addColumn("linked_at", t.int, (c) => c.notNull())
        .addColumn("unlinked", t.bool, (c) => c.notNull())
        .addColumn("mac", "text", (c) => c.notNull())
        .addPrimaryKeyConstraint("identity_links_pkey", ["method", "issuer", "subject"])
        .execute();
      await db.schema.createIndex("identity_links_identity").ifNotExists().on("identity_links").column("identity_id").execute();
    },
    /** Session epochs (revocation on unlink), and who asked for each pending code (per-client quotas). */
    "0002_epochs_and_clients": async (db, dialect) => {
      await db.schema.createTable("identity_epochs").ifNotExists()
        .addColumn("identity_id", "text", (c) => c.primaryKey())
        .addColumn("epoch", dialect.columns.int, (c) => c.notNull())
        .execute();
      if (!(await hasColumn(db, dialect, "identity_once", "client"))) {
        await db.schema.alterTable("identity_once").addColumn("client", "text", (c) => c.notNull().defaultTo("")).execute();
      }
      await db.schema.createIndex("identity_once_client").ifNotExists().on("identity_once").columns(["kind", "client"]).execute();
    },
    /**
     * Who asked for each send (a client's share of a mailbox's budget): sends of before count for
     * the mailbox only. No index of its own: a send reads the mailbox's sends of the hour (at most
     * its budget, by identity_sends_mailbox) and counts the client's among them. Pending codes kept
     * under the address alone (before e-mail codes were bound to their client) are found no more and
     * expire within their 10 minutes.
     */
    "0003_send_clients": async (db, dialect) => {
      if (!(await hasColumn(db, dialect, "identity_sends", "client"))) {
        await db.schema.alterTable("identity_sends").addColumn("client", "text", (c) => c.notNull().defaultTo("")).execute();
      }
    },
  },
};
