/**
 * The dashboard in Debian's Chromium, driven by playwright-core, as a person uses it: the quickstart
 * path clicked through (create account → usage key → wallet → group → action → run), errors shown
 * as the API's messages, the local top-up, a card top-up through Stripe Elements (Stripe.js and
 * Stripe answered by local doubles), the approval of a triggers client, and the wallet login of a
 * wallet-owned account with an injected EIP-1193 provider backed by a local chain account.
 * Screenshots go to test-results/dashboard/.
 */
import crypto from "node:crypto";
import { expect } from "chai";
import { JsonRpcProvider, solidityPackedKeccak256, verifyMessage, Wallet } from "ethers";
import { keyHash } from "../protocol/usageKeySeal";
import type { Page } from "playwright-core";
import { call, chainKeys, startStack, type Stack } from "./helpers/relayer";
import { walletAuthHeaders } from "./helpers/wallets";
import { requireChromium, fillCode, injectWallet, openBrowser, shot, shotOnFailure, type Browsing } from "./helpers/browser";
import { dashboardApprovalLink, startHarness, http, signedIn, type Harness } from "./helpers/triggers";
import { startStripeDouble, type StripeDouble } from "./helpers/stripeDouble";
import { computeCid } from "../executor/cid";

const SIGN_CODE = `async function main(params) {
  const pk = await Lit.Actions.getPrivateKey({ pkpId: params.pkpId });
  const wallet = new ethers.Wallet(pk);
  console.log("signing for", params.who);
  return { signature: await wallet.signMessage(params.message) };
}`;

/** The text of the alert the page shows (every API error ends up in one). */
const alertText = (page: Page) => page.getByRole("alert").first().innerText();

async function fillParams(page: Page, params: string) {
  await page.locator('textarea[name="run_params"]').fill(params);
}

describe("dashboard in a browser", function () {
  this.timeout(300_000);
  let stack: Stack;
  let b: Browsing;

  before(async function () {
    requireChromium(this);
    stack = await startStack();
    b = await openBrowser();
  });
  afterEach(async function () {
    if (this.currentTest?.state === "failed" && b) await shot(b.page, `failed-${this.currentTest.title.slice(0, 40).replace(/\W+/g, "-")}`);
  });
  after(async () => {
    await b?.close();
    await stack?.stop();
  });

  it("clicks through the quickstart: create account → usage key → wallet → group → action → run", async function () {
    const { page, context } = b;
    await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: stack.relayer.url });
    await page.goto(`${stack.relayer.url}/`);
    expect(page.url()).to.equal(`${stack.relayer.url}/dashboard/`);

    // Create an account: the key is shown once, with a copy button and the warning.
    await page.getByLabel("Account name").fill("quickstart");
    await page.getByRole("button", { name: "Create account" }).click();
    const keyBox = page.getByTestId("secret-value");
    await keyBox.waitFor();
    const accountKey = await keyBox.inputValue();
    expect(accountKey).to.match(/^[A-Za-z0-9+/]{43}=$/);
    expect(await page.getByRole("note").innerText()).to.contain("only time the key is shown");
    await page.getByRole("button", { name: "Copy" }).click();
    await page.getByRole("button", { name: "Copied" }).waitFor();
    expect(await page.evaluate(() => navigator.clipboard.readText())).to.equal(accountKey);
    await shot(page, "01-account-created");
    await page.getByRole("button", { name: "I have stored it, continue" }).click();
    await page.getByTestId("balance").filter({ hasText: "$" }).waitFor();
    expect(await page.getByTestId("signed-in").innerText()).to.equal("API key");
    expect(await page.getByTestId("balance").innerText()).to.match(/^\$[\d,]+\.\d\d credit$/);
    await shot(page, "02-signed-in");

    // A wallet (PKP).
    await page.getByRole("link", { name: "Wallets" }).click();
    await page.getByLabel("Name").fill("signer");
    await page.getByRole("button", { name: "Create wallet" }).click();
    const created = await page.getByRole("status").innerText();
    const pkp = /0x[0-9a-fA-F]{40}/.exec(created)![0];
    await page.getByTestId("wallets").getByText(pkp).waitFor();
    await shot(page, "03-wallet");

    // An action: its code, and the CID the service computes (the same as ours).
    await page.getByRole("link", { name: "Actions" }).click();
    await page.getByLabel("Name", { exact: true }).fill("sign a message");
    await fillCode(page, "action_code", SIGN_CODE);
    await page.getByRole("button", { name: "Add action" }).click();
    const cid = await page.getByTestId("action-cid").innerText();
    expect(cid).to.equal(await computeCid(SIGN_CODE));
    await page.getByTestId("actions").getByText(cid).waitFor();
    await shot(page, "04-action");

    // A group listing the wallet and the action.
    await page.getByRole("link", { name: "Groups" }).click();
    await page.getByRole("button", { name: "New group" }).click();
    await page.getByLabel("Name", { exact: true }).fill("signers");
    await page.getByLabel(/^signer 0x/).check();
    await page.getByLabel(/^sign a message 0x/).check();
    await page.getByRole("button", { name: "Create group" }).click();
    const row = page.getByTestId("groups").locator("tr", { hasText: "signers" });
    await row.waitFor();
    expect(await row.locator("td").allInnerTexts()).to.deep.equal(["1", "signers", "", "1", "1", "EditRemove"]);
    await shot(page, "05-group");

    // A usage key that may run actions in that group only.
    await page.getByRole("link", { name: "Usage keys" }).click();
    await page.getByRole("button", { name: "New usage key" }).click();
    await page.getByLabel("Name", { exact: true }).fill("bot");
    await page.getByLabel("Run actions in signers").check();
    await shot(page, "06-usage-key-form");
    await page.getByRole("button", { name: "Create usage key" }).click();
    const usageKey = await page.getByTestId("secret-value").inputValue();
    expect(usageKey).to.match(/^[A-Za-z0-9+/]{43}=$/);
    const keyRow = page.getByTestId("keys").locator("tr", { hasText: "bot" });
    await keyRow.locator("td").nth(2).filter({ hasNotText: "…" }).waitFor(); // "…" until the groups arrive
    expect(await keyRow.locator("td").nth(2).innerText()).to.equal("signers");
    await shot(page, "07-usage-key");
    const onChain = await stack.config.getUsageApiKey(keyHash(usageKey));
    expect(onChain.permissions.executeInGroups).to.deep.equal([1n]);

    // Run the saved action with the usage key: the response and the logs.
    await page.getByRole("link", { name: "Run", exact: true }).click();
    await page.locator('select[name="saved_action"]').selectOption({ label: "sign a message" });
    await page.waitForFunction((code) => (document.querySelector('textarea[name="run_code"]') as HTMLTextAreaElement).value === code, SIGN_CODE);
    // shown in the editor too (it takes the field's value on its next update, and its chunk may arrive after the pick)
    await page.waitForFunction(() => (document.querySelector('[data-code-editor="run_code"] .cm-content')?.textContent ?? "").includes("Lit.Actions.getPrivateKey"), undefined, { timeout: 10_000 });
    // The wallet is picked from the account's wallets (not pasted): it lands in params as pkpId.
    await fillParams(page, JSON.stringify({ message: "hello from the dashboard", who: "quickstart" }, null, 2));
    await page.getByLabel("Wallet (sets params.pkpId)").selectOption({ label: `signer ${pkp.slice(0, 6)}…${pkp.slice(-6)}` });
    expect(JSON.parse(await page.locator('textarea[name="run_params"]').inputValue())).to.deep.equal({ message: "hello from the dashboard", who: "quickstart", pkpId: pkp });
    await page.getByLabel(/^Key to run with/).fill(usageKey);
    await page.getByRole("button", { name: "Run", exact: true }).click();
    const response = JSON.parse(await page.getByTestId("run-response").innerText());
    expect(verifyMessage("hello from the dashboard", response.signature)).to.equal(pkp);
    expect(await page.getByTestId("run-logs").innerText()).to.contain("signing for quickstart");
    // With the result: how long it ran and what it cost, as the run history recorded them.
    let recorded: { duration_ms: number; cost_cents: number } | undefined;
    while (!recorded) recorded = (await call(stack, "GET", "/list_runs?limit=1", { key: usageKey })).body.runs[0]; // recorded beside the answer
    const ms = recorded.duration_ms;
    expect(await page.getByTestId("run-time").innerText()).to.equal(ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(2)} s`);
    expect(await page.getByTestId("run-cost").innerText()).to.equal(`$${(recorded.cost_cents / 100).toFixed(2)}`);
    expect(recorded.cost_cents).to.be.greaterThan(0);
    await shot(page, "08-run");
  });

  it("shows errors as their messages: an unknown key, bad params, the API's 403s", async function () {
    const { page } = b;
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.getByLabel("Account key or usage key").fill("not-a-key");
    await page.getByRole("button", { name: "Sign in" }).click();
    expect(await alertText(page)).to.equal("this key is unknown, revoked or expired");
    await shot(page, "09-error-bad-key");

    // A usage key with no rights, signed in: the run is refused with the API's 403 message.
    const owner = await (await fetch(`${stack.api}/new_account`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ account_name: "errors" }) })).json();
    const nothing = await (
      await fetch(`${stack.api}/add_usage_api_key`, { method: "POST", headers: { "content-type": "application/json", "x-api-key": owner.api_key }, body: JSON.stringify({ name: "nothing" }) })
    ).json();
    await page.getByLabel("Account key or usage key").fill(nothing.usage_api_key);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("link", { name: "Run", exact: true }).click();
    await fillParams(page, "{ not json");
    expect(await alertText(page)).to.match(/^params are not JSON/);
    await fillParams(page, "{}");
    // A key that may run nothing: the Run button is disabled, and the page says why.
    expect(await page.getByTestId("run-not-allowed").innerText()).to.contain("may run actions in no group");
    expect(await page.getByRole("button", { name: "Run", exact: true }).isDisabled()).to.equal(true);
    // A key that may run in a group, but not this code: the API's 403, as its message.
    const group = await (await fetch(`${stack.api}/add_group`, { method: "POST", headers: { "content-type": "application/json", "x-api-key": owner.api_key }, body: JSON.stringify({ group_name: "empty", group_description: "", pkp_ids_permitted: [], cid_hashes_permitted: [] }) })).json();
    const runner = await (
      await fetch(`${stack.api}/add_usage_api_key`, { method: "POST", headers: { "content-type": "application/json", "x-api-key": owner.api_key }, body: JSON.stringify({ name: "runner", execute_in_groups: [Number(group.group_id)] }) })
    ).json();
    await page.evaluate(() => (window.location.hash = "#/account"));
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.getByLabel("Account key or usage key").fill(runner.usage_api_key);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("link", { name: "Run", exact: true }).click();
    await fillParams(page, "{}");
    await page.getByRole("button", { name: "Run", exact: true }).click();
    expect(await alertText(page)).to.match(/^this key may not run action Qm\w+: no group on which it has execute lists it$/);
    await shot(page, "10-error-forbidden");
    // Signed in with a usage key, the dashboard says so and shows no owner's tab...
    await page.getByRole("link", { name: "Account" }).click();
    expect(await page.getByTestId("signed-in").innerText()).to.equal("usage key");
    expect(await page.getByTestId("usage-key-name").innerText()).to.equal("runner");
    expect(await page.getByRole("link", { name: "Usage keys" }).count()).to.equal(0);
    expect(await page.getByRole("link", { name: "Audit log" }).count()).to.equal(0);
    // ...and opened anyway, a usage key cannot manage usage keys: the page says so with the API's words.
    await page.evaluate(() => (window.location.hash = "#/keys"));
    await page.getByRole("alert").filter({ hasText: /^only the account key can do this; a usage key cannot$/ }).waitFor();
  });

  it("edits a usage key's permissions and removes it", async function () {
    const { page } = b;
    await page.getByRole("button", { name: "Sign out" }).click();
    const owner = await (await fetch(`${stack.api}/new_account`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ account_name: "edits" }) })).json();
    await page.getByLabel("Account key or usage key").fill(owner.api_key);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("link", { name: "Usage keys" }).click();
    await page.getByRole("button", { name: "New usage key" }).click();
    await page.getByLabel("Name", { exact: true }).fill("editable");
    await page.getByRole("button", { name: "Create usage key" }).click();
    const key = await page.getByTestId("secret-value").inputValue();
    await page.getByRole("button", { name: "Done" }).click();

    const row = page.getByTestId("keys").locator("tr", { hasText: "editable" });
    await row.getByRole("button", { name: "Edit" }).click();
    await page.getByLabel("Run actions in All groups (present and future)").check();
    await page.getByLabel("Create groups").check();
    await page.getByRole("button", { name: "Save permissions" }).click();
    await row.locator("td", { hasText: "all groups" }).waitFor();
    const k = await stack.config.getUsageApiKey(keyHash(key));
    expect(k.permissions.executeInGroups).to.deep.equal([0n]);
    expect(k.permissions.canCreateGroups).to.equal(true);

    page.once("dialog", (d) => void d.accept());
    await row.getByRole("button", { name: "Remove" }).click();
    await page.getByTestId("keys").getByText("No usage keys yet.").waitFor();
    const [account, , active] = await stack.config.resolveApiKey(keyHash(key));
    expect([account, active]).to.deep.equal([0n, false]);
  });

  it("tops up a local node with free credit", async function () {
    const { page } = b;
    await page.getByRole("link", { name: "Account" }).click();
    const before = await page.getByTestId("balance").filter({ hasText: "$" }).innerText();
    await page.getByLabel("Amount (USD)").fill("7.5");
    await page.getByRole("button", { name: "Add free credit" }).click();
    expect(await page.getByRole("status").innerText()).to.contain("Added $7.50 of free credit");
    expect(await page.getByLabel("Amount (USD)").inputValue()).to.equal(""); // the form is cleared after success
    const cents = (s: string) => Math.round(Number(s.replace(/[$,]| credit$/g, "")) * 100);
    await page.waitForFunction((want) => document.querySelector('[data-testid="balance"]')?.textContent?.replace(/[$,]| credit$/g, "") === want, (cents(before) / 100 + 7.5).toFixed(2));
    await shot(page, "11-free-credit");
  });
});

describe("dashboard in a browser: Stripe top-up, triggers approval, wallet login", function () {
  this.timeout(300_000);
  let stack: Stack;
  let double: StripeDouble;
  let triggers: Harness;
  let b: Browsing;

  before(async function () {
    requireChromium(this);
    double = await startStripeDouble();
    stack = await startStack({ env: double.env() });
    triggers = await startHarness({ TRIGGERS_CORE_URL: stack.relayer.url });
    stack.relayer.ctx.config.dashboard.triggersUrl = triggers.svc.url;
    b = await openBrowser();
  });
  after(async () => {
    await b?.close();
    await triggers?.stop();
    await stack?.stop();
    await double?.close();
  });

  it("pays by card with Stripe Elements (the publishable key from the API; Stripe.js answered by a double)", async function () {
    const { page, context } = b;
    const seen: { key?: string; mounted?: boolean } = {};
    await context.exposeFunction("__stripeDouble", (event: string, arg: string) => {
      if (event === "init") seen.key = arg;
      if (event === "mount") seen.mounted = true;
      if (event === "confirm") double.succeed(arg.split("_secret_")[0]); // the card payment succeeds at "Stripe"
      return true;
    });
    // Stripe.js is loaded from js.stripe.com (as Stripe requires); here a stand-in answers for it.
    await context.route(/^https:\/\/js\.stripe\.com\//, (route) =>
      route.fulfill({
        contentType: "application/javascript",
        body: `window.Stripe = function (key) {
          window.__stripeDouble("init", key);
          return {
            elements(opts) { return { secret: opts.clientSecret, create() { return { mount(el) { el.textContent = "[card form]"; window.__stripeDouble("mount", ""); } }; } }; },
            async confirmPayment({ elements }) { await window.__stripeDouble("confirm", elements.secret); return { paymentIntent: { status: "succeeded" } }; },
          };
        };`,
      }),
    );
    const owner = await (await fetch(`${stack.api}/new_account`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ account_name: "payer" }) })).json();
    await page.goto(`${stack.relayer.url}/dashboard/`);
    await page.getByLabel("Account key or usage key").fill(owner.api_key);
    await page.getByRole("button", { name: "Sign in" }).click();
    expect(await page.getByTestId("balance").filter({ hasText: "No credits" }).innerText()).to.equal("No credits");
    await page.getByLabel("Amount (USD, at least 5)").fill("3");
    await page.getByRole("button", { name: "Continue to payment" }).click();
    expect(await alertText(page)).to.equal("the amount must be at least $5.00; you entered $3.00");
    await page.getByLabel("Amount (USD, at least 5)").fill("12");
    await page.getByRole("button", { name: "Continue to payment" }).click();
    await page.getByText("[card form]").waitFor();
    expect(seen).to.deep.equal({ key: double.publishableKey, mounted: true });
    await shot(page, "12-stripe-elements");
    await page.getByRole("button", { name: "Pay" }).click();
    expect(await page.getByRole("status").innerText()).to.contain("Paid 12.00");
    await page.getByTestId("balance").filter({ hasText: "$12.00 credit" }).waitFor();
    await shot(page, "13-stripe-paid");
  });

  it("approves a triggers client's authorization request", async function () {
    const { page } = b;
    const token = crypto.randomBytes(32).toString("base64url");
    const challenge = crypto.createHash("sha256").update(token).digest("base64url");
    expect((await http(`${triggers.svc.url}/api/me`, { token })).status).to.equal(401);
    // The dashboard link of the client's approval page (fetched by another, signed-in session: this browser has none yet).
    const link = await dashboardApprovalLink(triggers, await signedIn(triggers, "linker@example.com"), challenge, "my-agent");
    expect(link.startsWith(`${stack.relayer.url}/dashboard/#/triggers/authorize?challenge=${challenge}&name=my-agent&ticket=`)).to.equal(true);
    await page.goto(link);
    expect(await page.getByTestId("triggers-client-name").innerText()).to.equal("my-agent");
    expect(await page.getByTestId("triggers-challenge").innerText()).to.equal(challenge);
    await page.getByLabel("E-mail").fill("owner@example.com");
    const mailed = triggers.links.length;
    await page.getByRole("button", { name: "Send me a sign-in link" }).click();
    await page.getByRole("status").waitFor();
    expect(triggers.links).to.have.length(mailed + 1);
    await page.goto(triggers.links[mailed]); // the e-mailed link signs in and comes back here
    expect(page.url()).to.equal(link);
    expect(await page.getByTestId("triggers-email").innerText()).to.equal("owner@example.com");
    await shot(page, "14-triggers-authorize");
    await page.getByRole("button", { name: "Approve" }).click();
    await page.getByTestId("triggers-approved").waitFor();
    const me = await http(`${triggers.svc.url}/api/me`, { token });
    expect(me.status).to.equal(200);
    expect(me.body.email).to.equal("owner@example.com");
    await shot(page, "15-triggers-approved");

    // The same challenge again: the triggers service's refusal is shown as its message.
    await page.reload();
    await page.getByRole("button", { name: "Approve" }).click();
    expect(await alertText(page)).to.contain("already used");
  });

  it("approves the client of the link shown: switching the link in the same tab (only the #part changes) approves the new link's token, not the first's", async function () {
    const { page, context } = b;
    await context.clearCookies(); // signed out of the triggers service: this test signs in itself
    const client = (name: string) => {
      const token = crypto.randomBytes(32).toString("base64url");
      return { name, token, challenge: crypto.createHash("sha256").update(token).digest("base64url") };
    };
    const [a, bee] = [client("agent-A"), client("agent-B")];
    const approvalPage = (c: { challenge: string; name: string }) => `${triggers.svc.url}/authorize?challenge=${c.challenge}&name=${c.name}`;
    // The client's link opens the triggers service's page; signed out, it asks for the e-mail first.
    const n = triggers.links.length;
    await page.goto(approvalPage(a));
    await page.getByLabel("E-mail").fill("switch@example.com");
    await page.getByRole("button", { name: "Send me a sign-in link" }).click();
    await page.getByText("Check your e-mail").waitFor();
    await page.goto(triggers.links[n]); // back on the approval page of A, signed in
    await page.getByRole("link", { name: "Approve in the dashboard" }).click();
    await page.getByTestId("triggers-email").waitFor();
    expect(await page.getByTestId("triggers-challenge").innerText()).to.equal(a.challenge);
    expect(await page.getByTestId("triggers-client-name").innerText()).to.equal("agent-A");
    // Client B's dashboard link, from its own approval page (another tab of the same browser).
    const other = await context.newPage();
    await other.goto(approvalPage(bee));
    const linkB = (await other.getByRole("link", { name: "Approve in the dashboard" }).getAttribute("href"))!;
    await other.close();
    expect(linkB).to.contain(`challenge=${bee.challenge}`);
    // Pasted into the first tab: only the part after # changes, so the page is not reloaded.
    await page.evaluate(() => ((window as unknown as { sameDocument: boolean }).sameDocument = true));
    await page.evaluate((u) => void (window.location.href = u), linkB);
    // The view shows what the new link asks: B's name and B's challenge.
    await page.getByTestId("triggers-client-name").filter({ hasText: "agent-B" }).waitFor();
    expect(await page.getByTestId("triggers-challenge").innerText()).to.equal(bee.challenge);
    expect(await page.evaluate(() => (window as unknown as { sameDocument?: boolean }).sameDocument)).to.equal(true);
    await page.getByRole("button", { name: "Approve" }).click();
    await page.getByTestId("triggers-approved").waitFor();
    const [meA, meB] = [await http(`${triggers.svc.url}/api/me`, { token: a.token }), await http(`${triggers.svc.url}/api/me`, { token: bee.token })];
    expect([meB.status, meB.body.email]).to.deep.equal([200, "switch@example.com"]);
    expect(meA.status).to.equal(401);
    const tokens = await http(`${triggers.svc.url}/api/tokens`, { token: bee.token });
    expect(tokens.body.map((t: { name: string }) => t.name)).to.deep.equal(["agent-B"]);
  });

  it("logs in with a wallet (injected EIP-1193 provider on a local chain account) and manages a wallet-owned account", async function () {
    const { context } = b;
    const page = await context.newPage();
    const key = chainKeys(12, 1)[0];
    const wallet = await injectWallet(context, stack.rpcUrl, key);
    try {
      await shotOnFailure(page, "wallet-login", async () => {
        await page.goto(`${stack.relayer.url}/dashboard/`);
        await page.getByRole("button", { name: "Sign out" }).click().catch(() => undefined);
        await page.getByRole("button", { name: "Connect wallet" }).click();
        expect(await alertText(page)).to.equal(`${wallet.address} has no wallet-owned account here yet: create one`);
        await page.getByRole("button", { name: "Create a wallet-owned account" }).click();
        await page.getByTestId("signed-in").filter({ hasText: "wallet" }).waitFor();
        expect(wallet.asked).to.include.members(["eth_requestAccounts", "eth_sendTransaction", "eth_signTypedData_v4"]);
        const accountHash = solidityPackedKeccak256(["address"], [wallet.address]);
        const account = await stack.config.getAccount(accountHash);
        expect([account.adminWalletAddress, account.managed]).to.deep.equal([wallet.address, false]);
        // The balance comes through X-Wallet-Auth (the login signature): Stripe mode, no credit yet.
        await page.getByTestId("balance").filter({ hasText: "No credits" }).waitFor();
        await shot(page, "16-wallet-login");

        // A PKP: minted by a CreateWallet signature, registered on chain by the wallet itself.
        await page.getByRole("link", { name: "Wallets" }).click();
        await page.getByLabel("Name").fill("wallet-owned pkp");
        await page.getByRole("button", { name: "Create wallet" }).click();
        const pkp = /0x[0-9a-fA-F]{40}/.exec(await page.getByRole("status").innerText())![0];
        expect((await stack.config.getWallet(accountHash, pkp)).derivationPath).not.to.equal(0n);

        // A group, written by the wallet to the contract (direct path).
        await page.getByRole("link", { name: "Groups" }).click();
        await page.getByRole("button", { name: "New group" }).click();
        await page.getByLabel("Name", { exact: true }).fill("wallet group");
        await page.getByLabel(/^wallet-owned pkp 0x/).check();
        await page.getByRole("button", { name: "Create group" }).click();
        await page.getByTestId("groups").locator("tr", { hasText: "wallet group" }).waitFor();

        // A usage key: minted by an AddUsageApiKey signature and reserved on chain for the account by the
        // service (a write the account pays for: without credit, the API's 402 is shown, nothing minted)...
        await page.getByRole("link", { name: "Usage keys" }).click();
        await page.getByRole("button", { name: "New usage key" }).click();
        await page.getByLabel("Name", { exact: true }).fill("wallet bot");
        await page.getByLabel("Run actions in wallet group").check();
        await page.getByRole("button", { name: "Create usage key" }).click();
        expect(await alertText(page)).to.contain("$0.00");
        expect((await stack.config.listUsageApiKeys(accountHash, 0, 10)).total).to.equal(0n);
        // ...so the wallet funds its account (X-Wallet-Auth, a card payment at the Stripe double), and the
        // key is registered and scoped by the wallet.
        const payer = { headers: await walletAuthHeaders(stack, new Wallet(key), BigInt(accountHash)) };
        const intent = (await call(stack, "POST", "/billing/create_payment_intent", { ...payer, body: { amount_cents: 500 } })).body.payment_intent_id as string;
        double.succeed(intent);
        expect((await call(stack, "POST", "/billing/confirm_payment", { ...payer, body: { payment_intent_id: intent } })).status).to.equal(200);
        await page.getByRole("button", { name: "Create usage key" }).click();
        const usageKey = await page.getByTestId("secret-value").inputValue();
        const [keyAccount, isAccountKey, active] = await stack.config.resolveApiKey(keyHash(usageKey));
        expect([keyAccount, isAccountKey, active]).to.deep.equal([BigInt(accountHash), false, true]);
        expect((await stack.config.getUsageApiKey(keyHash(usageKey))).permissions.executeInGroups).to.have.length(1);
        await shot(page, "17-wallet-usage-key");

        // Removal is a transaction from the wallet too.
        const before = wallet.asked.length;
        await page.evaluate(() => (window.location.hash = "#/groups"));
        await page.getByTestId("groups").locator("tr", { hasText: "wallet group" }).waitFor();
        page.once("dialog", (d) => void d.accept());
        await page.getByTestId("groups").locator("tr", { hasText: "wallet group" }).getByRole("button", { name: "Remove" }).click();
        await page.getByTestId("groups").getByText("No groups yet.").waitFor();
        expect(wallet.asked.slice(before)).to.include("eth_sendTransaction");

        // An account another wallet transfers to this one is not this wallet's until it accepts: connecting
        // with its hash asks the wallet to accept (a transaction), and only then signs in to it.
        const provider = new JsonRpcProvider(stack.rpcUrl, undefined, { staticNetwork: true, cacheTimeout: -1 });
        try {
          const seller = new Wallet(chainKeys(13, 1)[0], provider);
          const sold = stack.config.connect(seller);
          await (await sold.newChainSecuredAccount("sold", "")).wait();
          const soldHash = solidityPackedKeccak256(["address"], [seller.address]);
          await (await sold.transferAccountOwnership(soldHash, wallet.address)).wait();
          expect((await stack.config.getAccount(soldHash)).adminWalletAddress).to.equal(seller.address);
          await page.getByRole("button", { name: "Sign out" }).click();
          await page.getByLabel(/^Account hash/).fill(soldHash);
          const asked = wallet.asked.length;
          await page.getByRole("button", { name: "Connect wallet" }).click();
          await page.getByTestId("signed-in").filter({ hasText: "wallet" }).waitFor();
          expect(wallet.asked.slice(asked)).to.include("eth_sendTransaction");
          const sold2 = await stack.config.getAccount(soldHash);
          expect([sold2.adminWalletAddress, sold2.pendingAdminWalletAddress]).to.deep.equal([wallet.address, "0x0000000000000000000000000000000000000000"]);
        } finally {
          provider.destroy();
        }
      });
    } finally {
      await page.close();
      wallet.close();
    }
  });
});
