import { expect } from "chai";
import { ethers } from "hardhat";
import { SignJWT, base64url } from "jose";
import { call, startStack, type Stack } from "./helpers/relayer";
import { expectError } from "./helpers/relayerChecks";
import { startIssuer, type LocalIssuer } from "./helpers/oidcIssuer";
import { verifiedIdentity } from "../relayer/identity/identity";

const AUDIENCE = "vesta-test-client";

describe("identity: OpenID Connect sign-in (issue 21)", function () {
  this.timeout(120_000);
  let issuer: LocalIssuer;
  let other: LocalIssuer; // a second issuer, not on the allow-list
  let stack: Stack;
  before(async () => {
    issuer = await startIssuer(AUDIENCE);
    other = await startIssuer(AUDIENCE);
    stack = await startStack({ env: { VESTA_OIDC_PROVIDERS: JSON.stringify([{ issuer: issuer.issuer, audiences: [AUDIENCE], jwks_uri: issuer.jwksUri, name: "Local" }]) } });
  });
  after(async () => {
    await stack?.stop();
    await issuer?.close();
    await other?.close();
  });

  const nonce = async (): Promise<string> => {
    const r = await call(stack, "POST", "/identity/oidc/nonce");
    expect(r.status, JSON.stringify(r.body)).to.equal(200);
    return r.body.nonce;
  };
  const signIn = (idToken: string) => call(stack, "POST", "/identity/oidc/sign_in", { body: { id_token: idToken } });
  /** The account an OpenID subject of the allowed issuer would own, and whether it exists on chain. */
  const accountOf = async (sub: string) => {
    const r = await stack.relayer.ctx.identity.resolve(verifiedIdentity("oidc", issuer.issuer, sub));
    return { ...r, exists: await stack.config.accountExists(r.accountHash) };
  };

  it("lists the configured issuer; e-mail codes are off unless configured", async () => {
    const r = await call(stack, "GET", "/identity/methods");
    expect(r.body).to.deep.equal({ oidc: [{ issuer: issuer.issuer, name: "Local", audiences: [AUDIENCE] }], email: false, passkey: false });
    await expectError(await call(stack, "POST", "/identity/email/send_code", { body: { email: "a@example.com" } }), 404, "identity_method_off", "VESTA_EMAIL_CODES");
  });

  it("a valid token signs in: the first time creates the identity's account (managed false, admin = identity wallet), then a session", async () => {
    const sub = "alice";
    expect((await accountOf(sub)).exists).to.equal(false);
    const r = await signIn(await issuer.token({ sub, nonce: await nonce() }));
    expect(r.status, JSON.stringify(r.body)).to.equal(200);
    const mine = await accountOf(sub);
    expect(r.body.account_created).to.equal(true);
    expect(r.body.admin_wallet_address).to.equal(mine.wallet);
    expect(BigInt(r.body.api_key_hash)).to.equal(mine.accountHash);
    const onChain = await stack.config.getAccount(mine.accountHash);
    expect(onChain.adminWalletAddress).to.equal(mine.wallet);
    expect(onChain.managed).to.equal(false);
    const me = await call(stack, "GET", "/identity/session", { key: r.body.session_token, bearer: true });
    expect(me.body).to.deep.equal({ api_key_hash: r.body.api_key_hash, admin_wallet_address: mine.wallet, method: "oidc" });
    // Again: the same account, no new one.
    const again = await signIn(await issuer.token({ sub, nonce: await nonce() }));
    expect(again.status).to.equal(200);
    expect(again.body.account_created).to.equal(false);
    expect(again.body.api_key_hash).to.equal(r.body.api_key_hash);
  });

  /** Each refused token: the clear 401, no account, no block mined, and the nonce it carried still signs in once. */
  async function expectRefused(sub: string, make: (nonce: string) => Promise<string>, code: string, words: string) {
    const n = await nonce();
    const block = await ethers.provider.getBlockNumber();
    await expectError(await signIn(await make(n)), 401, code, words);
    expect((await accountOf(sub)).exists, "no account").to.equal(false);
    expect(await ethers.provider.getBlockNumber(), "nothing sent").to.equal(block);
    const good = await signIn(await issuer.token({ sub: `${sub}-good`, nonce: n }));
    expect(good.status, `the refused token did not take its nonce: ${JSON.stringify(good.body)}`).to.equal(200);
  }

  it("refuses a token of an issuer not on the allow-list", async () => {
    await expectRefused("w-iss", (n) => other.token({ sub: "w-iss", nonce: n, iss: other.issuer }), "invalid_id_token", "is not one this node accepts");
  });

  it("refuses a token of the allowed issuer's key for another audience", async () => {
    await expectRefused("w-aud", (n) => issuer.token({ sub: "w-aud", nonce: n, aud: "someone-else" }), "invalid_id_token", "another audience");
  });

  it("refuses a token with several audiences whose authorized party is not ours", async () => {
    await expectRefused("w-azp", (n) => issuer.token({ sub: "w-azp", nonce: n, aud: [AUDIENCE, "evil"], azp: "evil" }), "invalid_id_token", "azp");
  });

  it("refuses an expired token", async () => {
    const t = Math.floor(Date.now() / 1000);
    await expectRefused("w-exp", (n) => issuer.token({ sub: "w-exp", nonce: n, iat: t - 600, exp: t - 120 }), "invalid_id_token", "expired");
  });

  it("refuses a token signed by a key not in the issuer's JWKS (bad signature)", async () => {
    await expectRefused("w-sig", (n) => issuer.token({ sub: "w-sig", nonce: n }, { key: "stranger", kid: "es" }), "invalid_id_token", "signature does not verify");
  });

  it("refuses a token whose payload was altered after signing", async () => {
    await expectRefused(
      "w-alt",
      async (n) => {
        const [h, , s] = (await issuer.token({ sub: "someone", nonce: n })).split(".");
        return `${h}.${base64url.encode(JSON.stringify({ iss: issuer.issuer, aud: AUDIENCE, sub: "w-alt", nonce: n, iat: Math.floor(Date.now() / 1000), exp: Math.floor(Date.now() / 1000) + 300 }))}.${s}`;
      },
      "invalid_id_token",
      "signature does not verify",
    );
  });

  it("refuses alg none", async () => {
    await expectRefused(
      "w-none",
      async (n) =>
        `${base64url.encode(JSON.stringify({ alg: "none", typ: "JWT" }))}.${base64url.encode(JSON.stringify({ iss: issuer.issuer, aud: AUDIENCE, sub: "w-none", nonce: n, iat: Math.floor(Date.now() / 1000), exp: Math.floor(Date.now() / 1000) + 300 }))}.`,
      "invalid_id_token",
      "algorithm is not accepted",
    );
  });

  it("refuses key confusion: HS256 'signed' with the issuer's RSA public key", async () => {
    await expectRefused(
      "w-hs",
      (n) =>
        new SignJWT({ iss: issuer.issuer, aud: AUDIENCE, sub: "w-hs", nonce: n })
          .setProtectedHeader({ alg: "HS256", kid: "rs" })
          .setIssuedAt()
          .setExpirationTime("5m")
          .sign(new TextEncoder().encode(issuer.rsaPublicPem)),
      "invalid_id_token",
      "algorithm is not accepted",
    );
  });

  it("refuses a token without a nonce, with a nonce this node did not issue, or with its expiry pushed back", async () => {
    const block = await ethers.provider.getBlockNumber();
    await expectError(await signIn(await issuer.token({ sub: "w-n1" })), 401, "invalid_id_token", "nonce");
    await expectError(await signIn(await issuer.token({ sub: "w-n2", nonce: "abc.9999999999.forgedforgedforgedforgedforgedforg" })), 401, "invalid_nonce", "not issued by this node");
    const real = (await nonce()).split(".");
    const later = `${real[0]}.${Number(real[1]) + 3600}.${real[2]}`; // its expiry pushed back: the MAC no longer holds
    await expectError(await signIn(await issuer.token({ sub: "w-n3", nonce: later })), 401, "invalid_nonce", "not issued by this node");
    for (const s of ["w-n1", "w-n2", "w-n3"]) expect((await accountOf(s)).exists).to.equal(false);
    expect(await ethers.provider.getBlockNumber()).to.equal(block);
  });

  it("a nonce signs in once: the same token replayed, or another token with that nonce, is refused", async () => {
    const n = await nonce();
    const token = await issuer.token({ sub: "replay", nonce: n });
    expect((await signIn(token)).status).to.equal(200);
    await expectError(await signIn(token), 401, "invalid_nonce", "single use");
    await expectError(await signIn(await issuer.token({ sub: "replay-2", nonce: n })), 401, "invalid_nonce", "single use");
    expect((await accountOf("replay-2")).exists).to.equal(false);
  });

  it("two first sign-ins of one identity at once make exactly one account", async () => {
    const sub = "racer";
    const tokens = await Promise.all([1, 2, 3].map(async () => issuer.token({ sub, nonce: await nonce() })));
    const replies = await Promise.all(tokens.map(signIn));
    for (const r of replies) expect(r.status, JSON.stringify(r.body)).to.equal(200);
    expect(replies.filter((r) => r.body.account_created).length).to.equal(1);
    const { accountHash, wallet } = await accountOf(sub);
    const created = await stack.config.queryFilter(stack.config.filters.AccountCreated(accountHash));
    expect(created.length).to.equal(1);
    expect(created[0].args.adminWalletAddress).to.equal(wallet);
  });

  it("a malformed or oversized token is a clear 400/401, never a 5xx", async () => {
    await expectError(await signIn("not-a-jwt"), 401, "invalid_id_token", "not a JWT");
    await expectError(await call(stack, "POST", "/identity/oidc/sign_in", { body: { id_token: "x".repeat(20_000) } }), 400, "invalid_request", "id_token");
    await expectError(await call(stack, "POST", "/identity/oidc/sign_in", { body: { id_token: 5 } }), 400, "invalid_request", "id_token");
    // Hostile headers over a payload of the allowed issuer: each a 401, never a 5xx.
    const t = Math.floor(Date.now() / 1000);
    const payload = base64url.encode(JSON.stringify({ iss: issuer.issuer, aud: AUDIENCE, sub: "hostile", nonce: await nonce(), iat: t, exp: t + 300 }));
    const sig = base64url.encode("x".repeat(64));
    const headers = [
      { alg: "ES256", kid: {} },
      { alg: "ES256", kid: "es", crit: ["x"] },
      { alg: "RS256", kid: "es" },
      { alg: "ES256", kid: "nope" },
      { alg: "ES256" },
      { alg: ["ES256"] },
      [],
      "just a string",
    ];
    for (const h of headers) {
      const r = await signIn(`${base64url.encode(JSON.stringify(h))}.${payload}.${sig}`);
      expect(r.status, `${JSON.stringify(h)}: ${JSON.stringify(r.body)}`).to.equal(401);
      expect(r.body.code).to.equal("invalid_id_token");
    }
    expect((await accountOf("hostile")).exists).to.equal(false);
  });
});
