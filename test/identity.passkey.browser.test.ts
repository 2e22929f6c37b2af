/**
 * Passkeys in Debian's Chromium (playwright-core) with the DevTools protocol's virtual
 * authenticator: registration and sign-in through the real WebAuthn ceremony, the same wallet
 * both times; a cloned credential (its counter behind), a credential this node never registered,
 * and assertions for another relying party are refused and change nothing; challenges are single
 * use and bound to their purpose; a passkey linked to an e-mail identity signs into that identity.
 */
import path from "node:path";
import { expect } from "chai";
import { ethers } from "hardhat";
import type { CDPSession, Page } from "playwright-core";
import { call, startStack, type Stack } from "./helpers/relayer";
import { expectError } from "./helpers/relayerChecks";
import { rawExec } from "./helpers/rawDb";
import { requireChromium, openBrowser, type Browsing } from "./helpers/browser";
import { addAuthenticator, ceremony, forgedAssertion, freePort, newPrivateKey, type Answer } from "./helpers/passkeyPage";

const b64u = (b64: string) => Buffer.from(b64, "base64").toString("base64url");
type DevCredential = { credentialId: string; isResidentCredential: boolean; rpId: string; privateKey: string; userHandle: string; signCount: number };

describe("identity: passkeys in a browser (issue 21)", function () {
  this.timeout(300_000);
  let stack: Stack;
  let b: Browsing;
  let page: Page;
  let cdp: CDPSession;
  let api: string;
  let origin: string;
  const mails: { email: string; code: string }[] = [];

  before(async function () {
    requireChromium(this);
    const port = await freePort();
    origin = `http://localhost:${port}`;
    stack = await startStack({ env: { VESTA_PORT: String(port), VESTA_PASSKEY_RP_ID: "localhost", VESTA_PASSKEY_ORIGINS: origin, VESTA_EMAIL_CODES: "log" } });
    stack.relayer.ctx.identity.email!.mailer = (email, code) => void mails.push({ email, code });
    api = `${origin}/core/v1`;
    b = await openBrowser();
    page = b.page;
    await page.goto(`${origin}/dashboard/`);
    cdp = await b.context.newCDPSession(page);
    await cdp.send("WebAuthn.enable");
  });
  after(async () => {
    await b?.close();
    await stack?.stop();
  });

  const register = (key?: string) => ceremony(page, api, "create", key ? "/identity/link/passkey_options" : "/identity/passkey/register_options", key ? "/identity/link/passkey" : "/identity/passkey/register", key);
  const signIn = () => ceremony(page, api, "get", "/identity/passkey/options", "/identity/passkey/sign_in");
  const credentials = async (authenticatorId: string): Promise<DevCredential[]> => (await cdp.send("WebAuthn.getCredentials", { authenticatorId })).credentials as DevCredential[];
  const stored = (credentialId: string) => stack.relayer.ctx.identity.store.passkey(b64u(credentialId));
  const challenge = async (): Promise<string> => {
    const r = await call(stack, "POST", "/identity/passkey/options", { body: {} });
    expect(r.status, JSON.stringify(r.body)).to.equal(200);
    return r.body.options.challenge;
  };
  const ok = (r: Answer) => expect(r.status, JSON.stringify(r.body)).to.equal(200);

  /** The one authenticator of a test, removed after it. */
  let authenticator: string | undefined;
  beforeEach(async () => {
    authenticator = await addAuthenticator(cdp);
  });
  afterEach(async () => {
    if (authenticator) await cdp.send("WebAuthn.removeVirtualAuthenticator", { authenticatorId: authenticator });
    authenticator = undefined;
  });

  it("registers a passkey and signs in with it: the same identity, wallet and account both times; the user handle is the server's", async () => {
    const reg = await register();
    ok(reg);
    expect(reg.body.account_created).to.equal(true);
    const [cred] = await credentials(authenticator!);
    const row = await stored(cred.credentialId);
    expect(row!.user_handle, "the handle the server generated is the one the authenticator keeps").to.equal(b64u(cred.userHandle));
    expect(row!.rp_id).to.equal("localhost");
    const again = await signIn();
    ok(again);
    expect(again.body.account_created).to.equal(false);
    expect(again.body.admin_wallet_address).to.equal(reg.body.admin_wallet_address);
    expect(again.body.api_key_hash).to.equal(reg.body.api_key_hash);
    expect((await stack.config.getAccount(reg.body.api_key_hash)).adminWalletAddress).to.equal(reg.body.admin_wallet_address);
    expect((await stored(cred.credentialId))!.counter, "the counter moved forward").to.be.greaterThan(row!.counter);
    const session = await call(stack, "GET", "/identity/session", { key: again.body.session_token });
    expect(session.body).to.deep.include({ admin_wallet_address: reg.body.admin_wallet_address, method: "passkey" });
  });

  it("a cloned credential (its counter behind the stored one) is refused, and nothing changes", async () => {
    ok(await register());
    const [snapshot] = await credentials(authenticator!); // the key as a cloner copies it, counter and all
    ok(await signIn());
    ok(await signIn());
    const before = (await stored(snapshot.credentialId))!;
    expect(before.counter).to.be.greaterThan(snapshot.signCount + 1);
    await cdp.send("WebAuthn.removeVirtualAuthenticator", { authenticatorId: authenticator! });
    authenticator = await addAuthenticator(cdp);
    await cdp.send("WebAuthn.addCredential", { authenticatorId: authenticator, credential: snapshot });
    const block = await ethers.provider.getBlockNumber();
    const r = await signIn();
    await expectError(r, 401, "passkey_cloned", "counter");
    expect(r.body.session_token).to.equal(undefined);
    expect(await stored(snapshot.credentialId)).to.deep.equal(before);
    expect(await ethers.provider.getBlockNumber()).to.equal(block);
  });

  it("a credential this node never registered is refused, even carrying a registered passkey's user handle", async () => {
    const reg = await register();
    ok(reg);
    const [victim] = await credentials(authenticator!);
    const victimRow = (await stored(victim.credentialId))!;
    await cdp.send("WebAuthn.removeVirtualAuthenticator", { authenticatorId: authenticator! });
    authenticator = await addAuthenticator(cdp);
    const foreignId = Buffer.from("foreign credential 0001").toString("base64");
    await cdp.send("WebAuthn.addCredential", {
      authenticatorId: authenticator,
      credential: { credentialId: foreignId, isResidentCredential: true, rpId: "localhost", privateKey: newPrivateKey(), userHandle: victim.userHandle, signCount: 100 },
    });
    const block = await ethers.provider.getBlockNumber();
    const r = await signIn();
    await expectError(r, 401, "invalid_passkey", "not registered on this node");
    expect(await stored(foreignId)).to.equal(undefined);
    expect(await stored(victim.credentialId)).to.deep.equal(victimRow);
    expect(await ethers.provider.getBlockNumber()).to.equal(block);
  });

  it("assertions for another relying party (rp id or origin) are refused; the same forgery for this one signs in once, then its challenge is spent", async () => {
    ok(await register());
    const [cred] = await credentials(authenticator!);
    const base = { credentialId: b64u(cred.credentialId), privateKey: cred.privateKey, userHandle: b64u(cred.userHandle) };
    const before = (await stored(cred.credentialId))!;
    const send = (response: unknown) => call(stack, "POST", "/identity/passkey/sign_in", { body: { response } });

    await expectError(await send(forgedAssertion({ ...base, rpId: "evil.example", origin, challenge: await challenge(), counter: before.counter + 1 })), 401, "invalid_passkey", "Unexpected RP ID hash");
    await expectError(await send(forgedAssertion({ ...base, rpId: "localhost", origin: "https://evil.example", challenge: await challenge(), counter: before.counter + 1 })), 401, "invalid_passkey", "origin");
    expect(await stored(cred.credentialId), "refusals move no counter").to.deep.equal(before);

    // The harness is sound: the same assertion for this relying party signs in (once).
    const good = forgedAssertion({ ...base, rpId: "localhost", origin, challenge: await challenge(), counter: before.counter + 1 });
    ok(await send(good));
    await expectError(await send(good), 401, "invalid_passkey", "used already");
  });

  it("challenges are bound to their purpose: a registration challenge does not sign in, a sign-in challenge does not register", async () => {
    ok(await register());
    const [cred] = await credentials(authenticator!);
    const base = { credentialId: b64u(cred.credentialId), privateKey: cred.privateKey, userHandle: b64u(cred.userHandle), rpId: "localhost", origin };
    const before = (await stored(cred.credentialId))!;
    const regChallenge = (await call(stack, "POST", "/identity/passkey/register_options", { body: {} })).body.options.challenge;
    await expectError(
      await call(stack, "POST", "/identity/passkey/sign_in", { body: { response: forgedAssertion({ ...base, challenge: regChallenge, counter: before.counter + 1 }) } }),
      401, "invalid_passkey", "is not a sign-in challenge",
    );
    expect(await stored(cred.credentialId)).to.deep.equal(before);
  });

  it("a passkey record or a challenge written behind the service's back (an operator's) is refused", async () => {
    ok(await register());
    const [cred] = await credentials(authenticator!);
    const where = { sqliteFile: path.join(stack.relayerConfig.dataDir, "identity.sqlite") };
    // A challenge made by someone without the TEE's key (an operator's), in the shape of this node's: its MAC does not hold.
    const real = Buffer.from(await challenge(), "base64url").toString("utf8").split(".");
    const forgedChallenge = Buffer.from([...real.slice(0, 4), "A".repeat(real[4].length)].join(".")).toString("base64url");
    const before = (await stored(cred.credentialId))!;
    const base = { credentialId: b64u(cred.credentialId), privateKey: cred.privateKey, userHandle: b64u(cred.userHandle), rpId: "localhost", origin };
    await expectError(await call(stack, "POST", "/identity/passkey/sign_in", { body: { response: forgedAssertion({ ...base, challenge: forgedChallenge, counter: before.counter + 1 }) } }), 401, "invalid_passkey", "not issued by this node");
    // The stored credential re-pointed at another user handle (another identity): its MAC no longer holds, it signs into nothing.
    await rawExec(where, `UPDATE identity_passkeys SET user_handle = 'operator-handle' WHERE credential_id = '${b64u(cred.credentialId)}'`);
    const r = await signIn();
    await expectError(r, 401, "invalid_passkey", "does not verify");
    expect((await stored(cred.credentialId))!.counter).to.equal(before.counter);
  });

  it("two assertions racing with one counter value: exactly one signs in", async () => {
    ok(await register());
    const [cred] = await credentials(authenticator!);
    const before = (await stored(cred.credentialId))!;
    const make = async () =>
      forgedAssertion({ credentialId: b64u(cred.credentialId), privateKey: cred.privateKey, userHandle: b64u(cred.userHandle), rpId: "localhost", origin, challenge: await challenge(), counter: before.counter + 1 });
    const [a, c] = [await make(), await make()];
    const replies = await Promise.all([a, c].map((response) => call(stack, "POST", "/identity/passkey/sign_in", { body: { response } })));
    expect(replies.map((r) => r.status).sort()).to.deep.equal([200, 401]);
    expect(replies.find((r) => r.status === 401)!.body.code).to.equal("passkey_cloned");
    expect((await stored(cred.credentialId))!.counter).to.equal(before.counter + 1);
  });

  it("a passkey linked to an e-mail identity signs into that identity and its wallet", async () => {
    expect((await call(stack, "POST", "/identity/email/send_code", { body: { email: "pat@example.com" } })).status).to.equal(200);
    const byEmail = await call(stack, "POST", "/identity/email/sign_in", { body: { email: "pat@example.com", code: mails[mails.length - 1].code } });
    ok(byEmail);
    const linked = await register(byEmail.body.session_token);
    ok(linked);
    expect(linked.body.outcome).to.equal("linked");
    expect(linked.body.admin_wallet_address).to.equal(byEmail.body.admin_wallet_address);
    expect(linked.body.methods.map((m: { method: string }) => m.method)).to.deep.equal(["email", "passkey"]);
    const byPasskey = await signIn();
    ok(byPasskey);
    expect(byPasskey.body.account_created).to.equal(false);
    expect(byPasskey.body.admin_wallet_address).to.equal(byEmail.body.admin_wallet_address);
    expect(byPasskey.body.api_key_hash).to.equal(byEmail.body.api_key_hash);
  });

  it("link options issued to one identity's session cannot link a passkey with another identity's session", async () => {
    const sessionOf = async (email: string) => {
      await call(stack, "POST", "/identity/email/send_code", { body: { email } });
      const r = await call(stack, "POST", "/identity/email/sign_in", { body: { email, code: mails[mails.length - 1].code } });
      ok(r);
      return r.body.session_token as string;
    };
    const alice = await sessionOf("alice-pk@example.com");
    const mallory = await sessionOf("mallory-pk@example.com");
    const r = await page.evaluate(
      async ({ api, alice, mallory }) => {
        const b64u = (b: ArrayBuffer) => btoa(String.fromCharCode(...new Uint8Array(b))).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
        const bytes = (s: string) => Uint8Array.from(atob(s.replace(/-/g, "+").replace(/_/g, "/") + "===".slice((s.length + 3) % 4)), (c) => c.charCodeAt(0));
        const post = (path: string, key: string, body: unknown) => fetch(api + path, { method: "POST", headers: { "content-type": "application/json", "x-api-key": key }, body: JSON.stringify(body) });
        const o = (await (await post("/identity/link/passkey_options", alice, {})).json()).options;
        const c = (await navigator.credentials.create({ publicKey: { ...o, challenge: bytes(o.challenge), user: { ...o.user, id: bytes(o.user.id) }, excludeCredentials: [] } })) as PublicKeyCredential;
        const x = c.response as AuthenticatorAttestationResponse;
        const response = { id: c.id, rawId: b64u(c.rawId), type: c.type, clientExtensionResults: {}, response: { clientDataJSON: b64u(x.clientDataJSON), attestationObject: b64u(x.attestationObject) } };
        const done = await post("/identity/link/passkey", mallory, { response });
        return { status: done.status, body: await done.json(), id: c.id };
      },
      { api, alice, mallory },
    );
    await expectError(r, 401, "invalid_passkey", "another identity's session");
    expect(await stack.relayer.ctx.identity.store.passkey(r.id)).to.equal(undefined);
    const links = await call(stack, "GET", "/identity/links", { key: mallory });
    expect(links.body.methods.map((m: { method: string }) => m.method)).to.deep.equal(["email"]);
  });
});
