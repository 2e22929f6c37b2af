import path from "node:path";
import { expect } from "chai";
import { ethers } from "hardhat";
import { call, startStack, type Stack } from "./helpers/relayer";
import { expectError } from "./helpers/relayerChecks";
import { startIssuer, type LocalIssuer } from "./helpers/oidcIssuer";
import { rawExec, rawQuery } from "./helpers/rawDb";

const AUDIENCE = "vesta-test-client";
type Method = { method: string; issuer: string; subject: string };

describe("identity: linking and unlinking sign-in methods (issue 21)", function () {
  this.timeout(180_000);
  let issuer: LocalIssuer;
  let stack: Stack;
  const mails: { email: string; code: string }[] = [];
  before(async () => {
    issuer = await startIssuer(AUDIENCE);
    stack = await startStack({
      env: { VESTA_EMAIL_CODES: "log", VESTA_EMAIL_CODES_PER_HOUR: "100", VESTA_TRUST_PROXY: "loopback", VESTA_OIDC_PROVIDERS: JSON.stringify([{ issuer: issuer.issuer, audiences: [AUDIENCE], jwks_uri: issuer.jwksUri }]) },
    });
    stack.relayer.ctx.identity.email!.mailer = (email, code) => void mails.push({ email, code });
  });
  after(async () => {
    await stack?.stop();
    await issuer?.close();
  });

  const codeFor = async (email: string) => {
    expect((await call(stack, "POST", "/identity/email/send_code", { body: { email } })).status).to.equal(200);
    return mails[mails.length - 1].code;
  };
  const emailSignIn = async (email: string) => call(stack, "POST", "/identity/email/sign_in", { body: { email, code: await codeFor(email) } });
  const idToken = async (sub: string) => issuer.token({ sub, nonce: (await call(stack, "POST", "/identity/oidc/nonce")).body.nonce });
  const oidcSignIn = async (sub: string) => call(stack, "POST", "/identity/oidc/sign_in", { body: { id_token: await idToken(sub) } });
  const session = async (email: string) => {
    const r = await emailSignIn(email);
    expect(r.status, JSON.stringify(r.body)).to.equal(200);
    return r.body as { session_token: string; admin_wallet_address: string; api_key_hash: string };
  };
  const linkEmail = async (key: string, email: string) => call(stack, "POST", "/identity/link/email", { key, body: { email, code: await codeFor(email) } });
  const linkOidc = async (key: string, sub: string) => call(stack, "POST", "/identity/link/oidc", { key, body: { id_token: await idToken(sub) } });
  const methods = async (key: string): Promise<Method[]> => (await call(stack, "GET", "/identity/links", { key })).body.methods;
  const unlink = (key: string, m: Method) => call(stack, "POST", "/identity/unlink", { key, body: m });
  const emailMethod = (email: string): Method => ({ method: "email", issuer: "email", subject: email });

  it("an e-mail identity links an OpenID subject and another address; each then signs into the same identity, wallet and account", async () => {
    const ann = await session("ann@example.com");
    const r = await linkOidc(ann.session_token, "ann-google");
    expect(r.status, JSON.stringify(r.body)).to.equal(200);
    expect(r.body).to.deep.include({ outcome: "linked", admin_wallet_address: ann.admin_wallet_address, api_key_hash: ann.api_key_hash });
    expect((await linkEmail(ann.session_token, "ann@work.example")).status).to.equal(200);
    expect(await methods(ann.session_token)).to.deep.equal([emailMethod("ann@example.com"), { method: "oidc", issuer: issuer.issuer, subject: "ann-google" }, emailMethod("ann@work.example")]);
    for (const r2 of [await oidcSignIn("ann-google"), await emailSignIn("ann@work.example")]) {
      expect(r2.status, JSON.stringify(r2.body)).to.equal(200);
      expect(r2.body).to.deep.include({ account_created: false, admin_wallet_address: ann.admin_wallet_address, api_key_hash: ann.api_key_hash });
    }
    expect((await linkOidc(ann.session_token, "ann-google")).body.outcome, "linking it again is a no-op").to.equal("already");
  });

  it("an address links only with a code asked from the same network address: from another, 401 and nothing linked", async () => {
    const gus = await session("gus@example.com");
    const code = await codeFor("gus@work.example"); // asked from the test's own address
    const elsewhere = { key: gus.session_token, headers: { "x-forwarded-for": "203.0.113.66" }, body: { email: "gus@work.example", code } };
    await expectError(await call(stack, "POST", "/identity/link/email", elsewhere), 401, "invalid_email_code", "from this client");
    expect(await methods(gus.session_token)).to.deep.equal([emailMethod("gus@example.com")]);
    expect((await call(stack, "POST", "/identity/link/email", { key: gus.session_token, body: { email: "gus@work.example", code } })).status, "from the address that asked, the same code links").to.equal(200);
  });

  it("linking a method that already signs into another identity is refused, and nothing changes", async () => {
    const bob = await session("bob@example.com");
    const eve = await session("eve@example.com");
    expect((await oidcSignIn("bob-oidc")).status).to.equal(200); // bob-oidc has signed in: it owns an identity
    const block = await ethers.provider.getBlockNumber();
    await expectError(await linkEmail(eve.session_token, "bob@example.com"), 409, "method_taken", "another identity");
    await expectError(await linkOidc(eve.session_token, "bob-oidc"), 409, "method_taken");
    expect(await methods(eve.session_token)).to.deep.equal([emailMethod("eve@example.com")]);
    const back = await emailSignIn("bob@example.com");
    expect(back.body.admin_wallet_address, "bob still signs into his own wallet").to.equal(bob.admin_wallet_address);
    expect(await ethers.provider.getBlockNumber()).to.equal(block);
  });

  it("a method whose own identity has an account (signed in before the link table existed) is refused too", async () => {
    const old = await session("old@example.com");
    // As a database of before this version: the method's account exists on chain, its row does not.
    await rawExec({ sqliteFile: path.join(stack.relayerConfig.dataDir, "identity.sqlite") }, "DELETE FROM identity_links WHERE subject = 'old@example.com'");
    const eve = await session("eve2@example.com");
    await expectError(await linkEmail(eve.session_token, "old@example.com"), 409, "method_taken");
    expect((await emailSignIn("old@example.com")).body.admin_wallet_address).to.equal(old.admin_wallet_address);
  });

  it("two identities racing to link one OpenID subject: exactly one gets it", async () => {
    const a = await session("race-a@example.com");
    const b = await session("race-b@example.com");
    const [ta, tb] = [await idToken("contested"), await idToken("contested")];
    const replies = await Promise.all([
      call(stack, "POST", "/identity/link/oidc", { key: a.session_token, body: { id_token: ta } }),
      call(stack, "POST", "/identity/link/oidc", { key: b.session_token, body: { id_token: tb } }),
    ]);
    expect(replies.map((r) => r.status).sort()).to.deep.equal([200, 409]);
    const winner = replies[0].status === 200 ? a : b;
    expect((await oidcSignIn("contested")).body.admin_wallet_address).to.equal(winner.admin_wallet_address);
  });

  it("linking needs a fresh session of the identity: none, altered, or older than 5 minutes is refused and links nothing", async () => {
    const carl = await session("carl@example.com");
    await expectError(await call(stack, "POST", "/identity/link/email", { body: { email: "c2@example.com", code: "123456" } }), 401, "invalid_session");
    const altered = carl.session_token.slice(0, -2) + (carl.session_token.endsWith("AA") ? "BB" : "AA");
    await expectError(await linkEmail(altered, "c3@example.com"), 401, "invalid_session");
    const realNow = Date.now;
    let stale: string;
    try {
      Date.now = () => realNow() - 301_000;
      const id = (await stack.relayer.ctx.identity.sessions.verify(carl.session_token)).identityId;
      stale = (await stack.relayer.ctx.identity.sessions.issue(id, emailMethod("carl@example.com") as never, 0)).token;
    } finally {
      Date.now = realNow;
    }
    await expectError(await linkEmail(stale, "c4@example.com"), 401, "stale_session", "5 minutes");
    expect(await methods(carl.session_token)).to.deep.equal([emailMethod("carl@example.com")]);
    const c4 = await emailSignIn("c4@example.com");
    expect(c4.body.admin_wallet_address, "c4 was not linked: its own identity").not.to.equal(carl.admin_wallet_address);
  });

  it("unlinking never leaves none: the last method is refused; two unlinks racing leave one", async () => {
    const dan = await session("dan@example.com");
    await expectError(await unlink(dan.session_token, emailMethod("dan@example.com")), 409, "last_method");
    expect((await linkOidc(dan.session_token, "dan-oidc")).status).to.equal(200);
    const both = await Promise.all([unlink(dan.session_token, emailMethod("dan@example.com")), unlink(dan.session_token, { method: "oidc", issuer: issuer.issuer, subject: "dan-oidc" })]);
    // The loser is refused either as the last method or (its session revoked by the winner's unlink) as a revoked session.
    expect(both.filter((r) => r.status === 200)).to.have.length(1);
    const loser = both.find((r) => r.status !== 200)!;
    expect([`409 last_method`, `401 invalid_session`]).to.include(`${loser.status} ${loser.body.code}`);
    const renewed = both.find((r) => r.status === 200)!.body.session_token as string | undefined;
    expect(await methods(renewed ?? (await oidcSignIn("dan-oidc")).body.session_token)).to.have.length(1);
  });

  it("an unlinked method (even the one the identity was made from) signs into nothing; the identity keeps its wallet; it can be linked again", async () => {
    const fay = await session("fay@example.com");
    expect((await linkOidc(fay.session_token, "fay-oidc")).status).to.equal(200);
    const r = await unlink(fay.session_token, emailMethod("fay@example.com"));
    expect(r.status, JSON.stringify(r.body)).to.equal(200);
    expect(r.body.methods).to.deep.equal([{ method: "oidc", issuer: issuer.issuer, subject: "fay-oidc" }]);
    const block = await ethers.provider.getBlockNumber();
    await expectError(await emailSignIn("fay@example.com"), 403, "method_unlinked");
    expect(await ethers.provider.getBlockNumber(), "no account made for it").to.equal(block);
    const viaOidc = await oidcSignIn("fay-oidc");
    expect(viaOidc.body.admin_wallet_address).to.equal(fay.admin_wallet_address);
    expect((await linkEmail(viaOidc.body.session_token, "fay@example.com")).status).to.equal(200);
    expect((await emailSignIn("fay@example.com")).body.admin_wallet_address).to.equal(fay.admin_wallet_address);
  });

  it("a link written into the database behind the service's back (an operator pointing a method at another identity) signs into nothing", async () => {
    const victim = await session("victim@example.com");
    const victimId = (await stack.relayer.ctx.identity.sessions.verify(victim.session_token)).identityId;
    const where = { sqliteFile: path.join(stack.relayerConfig.dataDir, "identity.sqlite") };
    const [{ mac }] = await rawQuery<{ mac: string }>(where, "SELECT mac FROM identity_links WHERE subject = 'victim@example.com'");
    // Forged: a fresh row, and one carrying the victim's own row's MAC.
    await rawExec(where, `INSERT INTO identity_links (method, issuer, subject, identity_id, linked_at, unlinked, mac) VALUES ('email', 'email', 'op@example.com', '${victimId}', 0, 0, '${mac}')`);
    const block = await ethers.provider.getBlockNumber();
    await expectError(await emailSignIn("op@example.com"), 403, "method_unlinked", "does not verify");
    expect(await methods(victim.session_token)).to.deep.equal([emailMethod("victim@example.com")]);
    expect(await ethers.provider.getBlockNumber()).to.equal(block);
    // Re-pointing the victim's own row at an operator's identity breaks its MAC: the victim's method signs into nothing rather than elsewhere.
    await rawExec(where, "UPDATE identity_links SET identity_id = 'ff' WHERE subject = 'victim@example.com'");
    await expectError(await emailSignIn("victim@example.com"), 403, "method_unlinked", "does not verify");
  });

  it("unlinking a method revokes every session of the identity at once (on another replica too); the caller's own comes back renewed unless it came from that method", async () => {
    const ivy = await session("ivy@example.com");
    expect((await linkOidc(ivy.session_token, "ivy-oidc")).status).to.equal(200);
    const viaOidc = (await oidcSignIn("ivy-oidc")).body.session_token as string;
    const stolen = ivy.session_token; // e.g. the e-mail session of a device the owner lost: why the address is unlinked
    expect((await call(stack, "GET", "/identity/session", { key: stolen })).status).to.equal(200);
    // Another replica: its own Identity service over the same store.
    const { Identity } = await import("../relayer/identity/service");
    const { IdentityStore } = await import("../relayer/identity/store");
    const replicaStore = await IdentityStore.inDataDir(stack.relayerConfig.dataDir, undefined);
    const ctx = stack.relayer.ctx;
    const replica = new Identity(ctx.keys, replicaStore, ctx.config.identity, `${ctx.chain.chainId}:${ctx.config.accountConfigAddress}`, ctx.logger);
    try {
      expect((await replica.fromSession(stolen)).identityId, "the replica takes it before the unlink").to.match(/^[0-9a-f]{64}$/);
      const r = await unlink(viaOidc, emailMethod("ivy@example.com"));
      expect(r.status, JSON.stringify(r.body)).to.equal(200);
      for (const key of [stolen, viaOidc]) {
        await expectError(await call(stack, "GET", "/identity/session", { key }), 401, "invalid_session", "revoked");
        await expectError(await call(stack, "GET", "/identity/links", { key }), 401, "invalid_session", "revoked");
        await expectError(await call(stack, "POST", "/identity/transfer_account", { key, body: { new_admin_wallet_address: ethers.Wallet.createRandom().address } }), 401, "invalid_session", "revoked");
        let refused: unknown;
        await replica.fromSession(key).catch((err) => (refused = err));
        expect((refused as { code?: string })?.code, "the other replica refuses it too").to.equal("invalid_session");
      }
      // The caller's session (from the OpenID method, still linked) is renewed: same expiry, works.
      const renewed = r.body.session_token as string;
      expect(renewed).to.be.a("string");
      expect(r.body.expires_at).to.equal((await ctx.identity.sessions.verify(viaOidc)).expiresAt);
      expect((await call(stack, "GET", "/identity/session", { key: renewed })).body).to.deep.include({ admin_wallet_address: ivy.admin_wallet_address, method: "oidc" });
      // Unlinking the method the caller's own session came from: no renewal, that session is over too.
      expect((await linkEmail(renewed, "ivy@work.example")).status).to.equal(200);
      const own = await unlink(renewed, { method: "oidc", issuer: issuer.issuer, subject: "ivy-oidc" });
      expect(own.status, JSON.stringify(own.body)).to.equal(200);
      expect(own.body.session_token).to.equal(undefined);
      await expectError(await call(stack, "GET", "/identity/session", { key: renewed }), 401, "invalid_session", "revoked");
      // A fresh sign-in with a method still linked works.
      expect((await emailSignIn("ivy@work.example")).body.admin_wallet_address).to.equal(ivy.admin_wallet_address);
    } finally {
      await replicaStore.close();
    }
  });

  it("another identity's session cannot unlink or list a method it does not have", async () => {
    const gil = await session("gil@example.com");
    expect((await linkOidc(gil.session_token, "gil-oidc")).status).to.equal(200);
    const mal = await session("mal@example.com");
    await expectError(await unlink(mal.session_token, emailMethod("gil@example.com")), 404, "method_not_linked");
    expect(await methods(mal.session_token)).to.deep.equal([emailMethod("mal@example.com")]);
    expect(await methods(gil.session_token)).to.have.length(2);
  });
});
