/**
 * The dashboard's sign-in view in Chromium: passkey (virtual authenticator), e-mail code and the
 * configured OpenID provider beside the key and wallet logins; each signs into the identity's own
 * account, and a reload restores the session.
 */
import { expect } from "chai";
import type { CDPSession, Page } from "playwright-core";
import { call, startStack, type Stack } from "./helpers/relayer";
import { requireChromium, openBrowser, shot, type Browsing } from "./helpers/browser";
import { addAuthenticator, freePort } from "./helpers/passkeyPage";
import { startIssuer, type LocalIssuer } from "./helpers/oidcIssuer";

describe("dashboard: identity sign-in in a browser (issue 21)", function () {
  this.timeout(300_000);
  let stack: Stack;
  let issuer: LocalIssuer;
  let b: Browsing;
  let page: Page;
  let cdp: CDPSession;
  let origin: string;
  const mails: { email: string; code: string }[] = [];
  let authenticator: string;

  before(async function () {
    requireChromium(this);
    issuer = await startIssuer("dashboard-client");
    const port = await freePort();
    origin = `http://localhost:${port}`;
    stack = await startStack({
      env: {
        VESTA_PORT: String(port),
        VESTA_PASSKEY_RP_ID: "localhost",
        VESTA_PASSKEY_ORIGINS: origin,
        VESTA_EMAIL_CODES: "log",
        VESTA_OIDC_PROVIDERS: JSON.stringify([{ issuer: issuer.issuer, audiences: ["dashboard-client"], jwks_uri: issuer.jwksUri, name: "Local ID" }]),
      },
    });
    stack.relayer.ctx.identity.email!.mailer = (email, code) => void mails.push({ email, code });
    b = await openBrowser();
    page = b.page;
    cdp = await b.context.newCDPSession(page);
    await cdp.send("WebAuthn.enable");
    authenticator = await addAuthenticator(cdp);
  });
  afterEach(async function () {
    if (this.currentTest?.state === "failed" && b) await shot(b.page, `failed-${this.currentTest.title.slice(0, 40).replace(/\W+/g, "-")}`);
  });
  after(async () => {
    await b?.close();
    await stack?.stop();
    await issuer?.close();
  });

  const signedInAs = async () => {
    await page.getByTestId("signed-in").waitFor();
    return { method: await page.getByTestId("signed-in").innerText(), account: await page.locator("dd.mono").first().innerText() };
  };
  const signOut = () => page.getByRole("button", { name: "Sign out" }).click();
  /** The code mailed to `email` after `since` mails (the click returns before the request that mails it was answered). */
  const mailedCode = async (email: string, since: number) => {
    let mail: { email: string; code: string } | undefined;
    for (const deadline = Date.now() + 20_000; !(mail = mails.slice(since).find((m) => m.email === email)) && Date.now() < deadline; ) await new Promise((r) => setTimeout(r, 50));
    expect(mail, `a code was mailed to ${email}`).to.not.equal(undefined);
    return mail!.code;
  };

  it("offers passkey, e-mail code and the OpenID provider beside the key and wallet logins", async () => {
    await page.goto(`${origin}/dashboard/`);
    for (const name of ["Sign in with a passkey", "Create an account with a passkey", "E-mail me a code", "Sign in with Local ID", "Sign in", "Connect wallet"]) {
      await page.getByRole("button", { name, exact: true }).waitFor();
    }
    await shot(page, "identity-01-sign-in-view");
  });

  it("creates an account with a passkey, and signs into the same account with it after signing out; a reload keeps the session", async () => {
    await page.goto(`${origin}/dashboard/`);
    await page.getByRole("button", { name: "Create an account with a passkey" }).click();
    const first = await signedInAs();
    expect(first.method).to.equal("passkey (identity-owned)");
    const wallet = (await stack.config.getAccount(first.account)).adminWalletAddress;
    expect(wallet).to.match(/^0x[0-9a-fA-F]{40}$/);
    await signOut();
    await page.getByRole("button", { name: "Sign in with a passkey" }).click();
    expect(await signedInAs()).to.deep.equal(first);
    await page.reload();
    expect(await signedInAs(), "restored from the tab's session").to.deep.equal(first);
    await signOut();
  });

  it("signs in with an e-mail code", async () => {
    await page.goto(`${origin}/dashboard/`);
    await page.getByLabel("E-mail address").fill("dora@example.com");
    await page.getByRole("button", { name: "E-mail me a code" }).click();
    // The click returns before the request that mails the code has been answered: wait for the mail.
    let mail: { email: string; code: string } | undefined;
    for (const deadline = Date.now() + 20_000; !(mail = mails.find((m) => m.email === "dora@example.com")) && Date.now() < deadline; ) await new Promise((r) => setTimeout(r, 50));
    expect(mail, "the code was mailed").to.not.equal(undefined);
    await page.getByLabel("Code from the e-mail").fill(mail!.code);
    await page.getByRole("button", { name: "Sign in with the code" }).click();
    const s = await signedInAs();
    expect(s.method).to.equal("email (identity-owned)");
    const viaApi = await stack.relayer.ctx.identity.resolve({ method: "email", issuer: "email", subject: "dora@example.com" } as never);
    expect(s.account.toLowerCase()).to.equal(`0x${viaApi.accountHash.toString(16).padStart(64, "0")}`);
    await signOut();
  });

  it("a signed-in e-mail identity links a passkey, another address and an OpenID subject, unlinks (never the last), and an unlinked method's session is over", async () => {
    await cdp.send("WebAuthn.removeVirtualAuthenticator", { authenticatorId: authenticator }); // a fresh authenticator: this test's passkey only
    authenticator = await addAuthenticator(cdp);
    await page.goto(`${origin}/dashboard/`);
    await page.getByLabel("E-mail address").fill("lin@example.com");
    let since = mails.length;
    await page.getByRole("button", { name: "E-mail me a code" }).click();
    await page.getByLabel("Code from the e-mail").fill(await mailedCode("lin@example.com", since));
    await page.getByRole("button", { name: "Sign in with the code" }).click();
    const first = await signedInAs();
    const emailSession = (await page.evaluate(() => sessionStorage.getItem("vesta.session.key")))!;
    const items = page.getByTestId("identity-methods").locator("li");
    await items.first().waitFor();
    expect(await items.allInnerTexts()).to.deep.equal(["e-mail lin@example.com Unlink"]);
    expect(await items.first().getByRole("button", { name: "Unlink" }).isDisabled(), "the last method cannot be unlinked").to.equal(true);

    await page.getByRole("button", { name: "Add a passkey" }).click();
    await items.nth(1).waitFor();
    expect(await items.nth(1).innerText()).to.match(/^passkey /);

    await page.getByLabel("Another e-mail address").fill("lin@work.example");
    since = mails.length;
    await page.getByRole("button", { name: "Send a code to link it" }).click();
    await page.getByLabel("Code sent to that address").fill(await mailedCode("lin@work.example", since));
    await page.getByRole("button", { name: "Link this address" }).click();
    await items.nth(2).waitFor();
    expect(await items.nth(2).innerText()).to.equal("e-mail lin@work.example Unlink");

    // The OpenID provider, by its redirect: the tab comes back signed in, and links the subject.
    issuer.authorize.subject = "lin-oidc";
    await page.getByRole("button", { name: "Link Local ID", exact: true }).click();
    await items.nth(3).waitFor();
    expect(await items.nth(3).innerText()).to.equal(`${issuer.issuer} (lin-oidc) Unlink`);
    expect(page.url()).not.to.include("id_token");

    // Unlinking the method this session came from: the tab is signed out, and that session is refused everywhere.
    await items.filter({ hasText: "lin@example.com" }).getByRole("button", { name: "Unlink" }).click();
    await page.getByRole("alert").filter({ hasText: "was unlinked" }).waitFor();
    expect(await page.getByTestId("signed-in").count()).to.equal(0);
    expect((await call(stack, "GET", "/identity/session", { key: emailSession })).status).to.equal(401);
    await expectSignInRefused("lin@example.com");

    // The passkey signs into the same account; unlinking another method keeps this tab signed in (its session renewed).
    await page.getByRole("button", { name: "Sign in with a passkey" }).click();
    expect(await signedInAs()).to.deep.equal({ ...first, method: "passkey (identity-owned)" });
    await items.nth(1).waitFor();
    const passkeySession = (await page.evaluate(() => sessionStorage.getItem("vesta.session.key")))!;
    await items.filter({ hasText: "lin@work.example" }).getByRole("button", { name: "Unlink" }).click();
    await page.waitForFunction((old) => sessionStorage.getItem("vesta.session.key") !== old, passkeySession);
    await items.nth(2).waitFor({ state: "detached" });
    const renewed = (await page.evaluate(() => sessionStorage.getItem("vesta.session.key")))!;
    await items.filter({ hasText: "lin-oidc" }).getByRole("button", { name: "Unlink" }).click();
    await page.waitForFunction((old) => sessionStorage.getItem("vesta.session.key") !== old, renewed);
    await items.nth(1).waitFor({ state: "detached" });
    expect((await items.allInnerTexts()).map((t) => t.split(" ")[0])).to.deep.equal(["passkey"]);
    expect(await items.first().getByRole("button", { name: "Unlink" }).isDisabled()).to.equal(true);
    expect((await call(stack, "GET", "/identity/session", { key: passkeySession })).status, "the old token is revoked").to.equal(401);
    await page.reload();
    expect(await signedInAs(), "the renewed session restores the tab").to.deep.equal({ ...first, method: "passkey (identity-owned)" });
    await signOut();
  });

  /** An e-mail sign-in of an unlinked address is refused (403 method_unlinked). */
  const expectSignInRefused = async (email: string) => {
    const since = mails.length;
    expect((await call(stack, "POST", "/identity/email/send_code", { body: { email } })).status).to.equal(200);
    const r = await call(stack, "POST", "/identity/email/sign_in", { body: { email, code: await mailedCode(email, since) } });
    expect([r.status, r.body.code]).to.deep.equal([403, "method_unlinked"]);
  };

  it("signs in through the OpenID provider's redirect (state and nonce bound to the tab); the token leaves the address bar", async () => {
    await page.goto(`${origin}/dashboard/`);
    issuer.authorize.subject = "dash-user";
    await page.getByRole("button", { name: "Sign in with Local ID", exact: true }).click();
    const s = await signedInAs();
    expect(s.method).to.equal("oidc (identity-owned)");
    const sent = issuer.authorize.last!.params;
    expect(sent).to.deep.include({ client_id: "dashboard-client", response_type: "id_token", redirect_uri: `${origin}/dashboard/` });
    expect(sent.state, "a state of the tab's own").to.match(/^[A-Za-z0-9_-]{32}$/);
    expect(page.url()).not.to.include("id_token");
    const viaApi = await stack.relayer.ctx.identity.resolve({ method: "oidc", issuer: issuer.issuer, subject: "dash-user" } as never);
    expect(s.account.toLowerCase()).to.equal(`0x${viaApi.accountHash.toString(16).padStart(64, "0")}`);
    await signOut();
  });

  it("an answer the tab did not ask for (login CSRF: someone else's token, state missing or another) is refused before it is sent; the token stays unused", async () => {
    const { nonce } = (await call(stack, "POST", "/identity/oidc/nonce")).body;
    const attackers = await issuer.token({ sub: "attacker", aud: "dashboard-client", nonce });
    for (const fragment of [`id_token=${attackers}`, `id_token=${attackers}&state=guessed`]) {
      await page.goto(`${origin}/dashboard/`);
      await page.evaluate(() => sessionStorage.setItem("vesta.oidc.pending", JSON.stringify({ state: "the-tabs-own-state-0123456789abcdef", nonce: "n" })));
      await page.goto(`${origin}/dashboard/#${fragment}`);
      await page.getByRole("alert").filter({ hasText: "was not asked for by this tab" }).waitFor();
      expect(await page.getByTestId("signed-in").count(), "not signed in").to.equal(0);
      expect(page.url()).not.to.include("id_token");
    }
    // The dashboard never sent it: its nonce is still unused (the attacker's own sign-in with it works).
    const r = await call(stack, "POST", "/identity/oidc/sign_in", { body: { id_token: attackers } });
    expect(r.status, JSON.stringify(r.body)).to.equal(200);
  });

  it("a provider answer replayed into the tab that asked for it (same state and nonce) is refused: the nonce signed in once", async () => {
    await page.goto(`${origin}/dashboard/`);
    issuer.authorize.subject = "dash-replay";
    await page.getByRole("button", { name: "Sign in with Local ID", exact: true }).click();
    await signedInAs();
    const { params, location } = issuer.authorize.last!;
    await signOut();
    await page.evaluate((p) => sessionStorage.setItem("vesta.oidc.pending", JSON.stringify(p)), { state: params.state, nonce: params.nonce });
    await page.goto(location);
    await page.getByRole("alert").filter({ hasText: "signed in already" }).waitFor();
    expect(await page.getByTestId("signed-in").count()).to.equal(0);
  });
});
