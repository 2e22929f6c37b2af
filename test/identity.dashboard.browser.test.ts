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
    await addAuthenticator(cdp);
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

  it("takes the ID token the provider sends back in the fragment, and signs in with it (the token leaves the address bar)", async () => {
    const { nonce } = (await call(stack, "POST", "/identity/oidc/nonce")).body;
    const token = await issuer.token({ sub: "dash-user", aud: "dashboard-client", nonce });
    await page.goto(`${origin}/dashboard/#id_token=${token}`);
    const s = await signedInAs();
    expect(s.method).to.equal("oidc (identity-owned)");
    expect(page.url()).not.to.include("id_token");
    await signOut();
  });
});
