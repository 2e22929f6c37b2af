/**
 * The dashboard's Actions and Run views, usage-key sign-in and the small things users notice, in
 * Debian's Chromium (playwright-core) against a real relayer: the code editor (CodeMirror, lazy) and
 * its syntax check before saving; an action opened by CID in a browser that never saw its code
 * (GET get_action_code), its metadata edited, run by CID with the wallet picker; a usage key sees only
 * what it may do and is named; a deleted group or action disappears from every list and picker; top-up
 * amounts and key expiry refused in the units typed; forms cleared after success.
 */
import { expect } from "chai";
import { keccak256, toUtf8Bytes } from "ethers";
import type { Page } from "playwright-core";
import { computeCid } from "../executor/cid";
import { call, startStack, type Stack } from "./helpers/relayer";
import { checkWidths, fillCode, openBrowser, requireChromium, shot, type Browsing } from "./helpers/browser";

const GREET = `async function main(params) {
  console.log("greeting", params.who);
  return { hi: params.who, wallet: params.pkpId ?? null };
}`;
const BROKEN = `async function main(params) {
  return { oops: params.who ;
}`;

const post = async (stack: Stack, path: string, body: unknown, key: string) => {
  const r = await call(stack, "POST", path, { key, body });
  expect(r.status, JSON.stringify(r.body)).to.equal(200);
  return r.body;
};
const alertText = (page: Page) => page.getByRole("alert").first().innerText();

describe("dashboard in a browser: actions by CID, the code editor, usage-key views, small things", function () {
  this.timeout(300_000);
  let stack: Stack;
  let b: Browsing;
  let owner: string;
  let pkp: string;

  before(async function () {
    requireChromium(this);
    stack = await startStack();
    b = await openBrowser();
    owner = (await post(stack, "/new_account", { account_name: "actions" }, "")).api_key;
    pkp = (await post(stack, "/create_wallet", { name: "main wallet", description: "" }, owner)).wallet_address;
  });
  afterEach(async function () {
    if (this.currentTest?.state === "failed" && b) await shot(b.page, `failed-${this.currentTest.title.slice(0, 40).replace(/\W+/g, "-")}`);
  });
  after(async () => {
    await b?.close();
    await stack?.stop();
  });

  const signIn = async (key: string) => {
    const { page } = b;
    await page.goto(`${stack.relayer.url}/dashboard/`);
    const out = page.getByRole("button", { name: "Sign out" });
    await out.or(page.getByLabel("Account key or usage key")).waitFor(); // a restored session, or the sign-in form
    if (await out.count()) await out.click();
    await page.getByLabel("Account key or usage key").fill(key);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByTestId("signed-in").waitFor();
  };

  it("edits code in CodeMirror (loaded when shown), refuses to save code that does not parse (line and column), clears the form once saved", async function () {
    const { page } = b;
    await signIn(owner);
    const loaded: string[] = [];
    page.on("response", (r) => loaded.push(new URL(r.url()).pathname));
    await page.getByRole("link", { name: "Actions" }).click();
    await page.locator('[data-code-editor="action_code"] .cm-editor').waitFor();
    expect(loaded.some((p) => /\/dashboard\/assets\/codemirror-[\w-]+\.js$/.test(p)), "the editor's chunk is fetched when the tab shows it").to.equal(true);
    await page.getByLabel("Name", { exact: true }).fill("greet");
    await page.getByLabel("Description", { exact: true }).fill("says hi");
    await fillCode(page, "action_code", BROKEN);
    // Highlighted as JavaScript: keywords are marked up by the grammar.
    await page.waitForFunction(() => document.querySelectorAll('[data-code-editor="action_code"] .cm-content span').length > 3, undefined, { timeout: 10_000 });
    await page.getByRole("button", { name: "Add action" }).click();
    expect(await alertText(page)).to.equal("the code does not parse: syntax error at line 2, column 29 (near “;”)");
    await shot(page, "30-action-syntax-error");
    const [listed] = await stack.config.listActions(keccak256(toUtf8Bytes(owner)), 0, 10);
    expect(listed).to.have.length(0); // nothing was added
    expect(await page.getByLabel("Name", { exact: true }).inputValue()).to.equal("greet"); // the form keeps what was typed

    await fillCode(page, "action_code", GREET);
    await page.getByRole("button", { name: "Add action" }).click();
    const cid = await page.getByTestId("action-cid").innerText();
    expect(cid).to.equal(await computeCid(GREET));
    await page.getByTestId("actions").getByText(cid).waitFor();
    expect([await page.getByLabel("Name", { exact: true }).inputValue(), await page.getByLabel("Description", { exact: true }).inputValue()]).to.deep.equal(["", ""]);
    expect(await page.locator('textarea[name="action_code"]').inputValue()).to.match(/^async function main\(params\) \{\n  return \{ hello:/); // the template again
  });

  it("opens an action by CID in a browser that never saw its code: code from the service, metadata, edit it, run it by CID with a picked wallet", async function () {
    const { page } = b;
    const cid = await computeCid(GREET);
    // The code is stored by the node once it has run (here: over the API, as a script would).
    const group = await post(stack, "/add_group", { group_name: "greeters", group_description: "", pkp_ids_permitted: [pkp], cid_hashes_permitted: [keccak256(toUtf8Bytes(cid))] }, owner);
    await post(stack, "/lit_action", { code: GREET, js_params: { who: "api" } }, owner);
    // Another browser: nothing of this action in its storage.
    await page.evaluate(() => localStorage.clear());
    await signIn(owner);
    await page.getByRole("link", { name: "Actions" }).click();
    const row = page.getByTestId("actions").locator("tr", { hasText: "greet" });
    expect(await row.locator("td").nth(1).innerText()).to.equal("(added elsewhere: open it by its CID below)");
    await page.getByLabel(/^Open an action by its CID/).fill("Qm123");
    await page.getByRole("button", { name: "Open", exact: true }).click();
    expect(await alertText(page)).to.match(/^a CID is Qm and 44 base58 characters/);
    await page.getByLabel(/^Open an action by its CID/).fill(cid);
    await page.getByRole("button", { name: "Open", exact: true }).click();
    expect(await page.getByTestId("detail-code").innerText()).to.equal(GREET);
    expect(await page.getByTestId("detail-cid").innerText()).to.equal(cid);
    // The name comes from the account's list, fetched beside the code: "…" until it arrives.
    await page.getByTestId("detail-name").filter({ hasNotText: "…" }).waitFor();
    expect([await page.getByTestId("detail-name").innerText(), await page.getByTestId("detail-description").innerText()]).to.deep.equal(["greet", "says hi"]);
    await shot(page, "31-action-by-cid");

    // Edit its metadata: on chain, and in the list below.
    await page.getByRole("button", { name: "Edit metadata" }).click();
    await page.getByLabel("Action name").fill("greet v2");
    await page.getByLabel("Action description").fill("says hi, politely");
    await page.getByRole("button", { name: "Save metadata" }).click();
    await page.getByRole("status").filter({ hasText: "Metadata saved." }).waitFor();
    await page.getByTestId("actions").locator("tr", { hasText: "greet v2" }).waitFor();
    expect(await page.getByTestId("detail-name").innerText()).to.equal("greet v2");
    const [actions] = await stack.config.listActions(keccak256(toUtf8Bytes(owner)), 0, 10);
    expect(actions.map((a) => [a.name, a.description])).to.deep.equal([["greet v2", "says hi, politely"]]);
    // Opened once, this browser names it by CID in the list.
    expect(await page.getByTestId("actions").locator("tr", { hasText: "greet v2" }).locator("td").nth(1).innerText()).to.equal(cid);

    // A CID the node stores no code for: said so, not an error page.
    const unknown = await computeCid("async function main() { return 'never stored'; }");
    await page.evaluate((c) => (window.location.hash = `#/actions?cid=${c}`), unknown);
    await page.getByTestId("detail-no-code").waitFor();
    await page.getByTestId("detail-name").filter({ hasNotText: "…" }).waitFor();
    expect(await page.getByTestId("detail-name").innerText()).to.equal("(not one of this account's actions)");

    // Run it by CID: the code shown is the node's, the wallet picked from the account's wallets.
    await page.evaluate((c) => (window.location.hash = `#/actions?cid=${c}`), cid);
    await page.getByRole("link", { name: "Run it" }).click();
    expect(await page.getByLabel("Action CID").inputValue()).to.equal(cid);
    expect(await page.getByTestId("run-cid-code").innerText()).to.equal(GREET);
    await page.locator('textarea[name="run_params"]').fill('{ "who": "by cid" }');
    await page.getByLabel("Wallet (sets params.pkpId)").selectOption(pkp);
    await page.getByRole("button", { name: "Run", exact: true }).click();
    expect(JSON.parse(await page.getByTestId("run-response").innerText())).to.deep.equal({ hi: "by cid", wallet: pkp });
    expect(await page.getByTestId("run-time").innerText()).to.match(/^\d+ ms$|^\d+\.\d\d s$/);
    expect(await page.getByTestId("run-cost").innerText()).to.match(/^\$\d+\.\d\d$/);
    await shot(page, "32-run-by-cid");
    expect(Number(group.group_id)).to.equal(1);
  });

  it("signed in with a usage key: names the key, shows its permissions, hides or disables what it may not do", async function () {
    const { page } = b;
    const maker = (await post(stack, "/add_usage_api_key", { name: "wallet maker", description: "makes wallets", can_create_pkps: true, execute_in_groups: [1] }, owner)).usage_api_key;
    await signIn(maker);
    expect(await page.getByTestId("signed-in").innerText()).to.equal("usage key");
    expect(await page.getByTestId("usage-key-name").innerText()).to.equal("wallet maker");
    expect(await page.locator(".who").innerText()).to.contain(`usage key “wallet maker” ${keccak256(toUtf8Bytes(maker)).slice(0, 10)}…`);
    await page.getByTestId("usage-key-permissions").locator("tr").first().filter({ hasNotText: "…" }).waitFor(); // "…" until the group names arrive
    const perms = await page.getByTestId("usage-key-permissions").locator("tr").allInnerTexts();
    expect(perms.map((t) => t.replace(/\s+/g, " ").trim())).to.deep.equal([
      "Run actions in greeters",
      "Create groups no",
      "Delete groups no",
      "Create wallets yes",
      "Manage actions in none",
      "Add wallets to none",
      "Remove wallets from none",
    ]);
    expect(await page.locator("nav a").allInnerTexts()).to.deep.equal(["Account", "Wallets", "Groups", "Actions", "Run", "Runs", "Triggers", "Usage"]);
    await page.getByRole("link", { name: "Wallets" }).click();
    await page.getByRole("button", { name: "Create wallet" }).waitFor(); // it may create wallets
    await page.getByRole("link", { name: "Groups" }).click();
    await page.getByTestId("groups").locator("tr", { hasText: "greeters" }).waitFor();
    expect(await page.getByRole("button", { name: "New group" }).count()).to.equal(0);
    expect(await page.getByTestId("groups").getByRole("button").count()).to.equal(0); // no Edit, no Remove
    await page.getByRole("link", { name: "Actions" }).click();
    await page.getByTestId("actions").locator("tr", { hasText: "greet v2" }).waitFor();
    expect(await page.getByRole("button", { name: "Remove" }).count()).to.equal(0);
    expect(await page.getByRole("heading", { name: "Add an action" }).count()).to.equal(0);
    await page.getByRole("link", { name: "Run", exact: true }).click();
    expect(await page.getByRole("button", { name: "Run", exact: true }).isDisabled()).to.equal(false);
    await shot(page, "33-usage-key-account");

    const idle = (await post(stack, "/add_usage_api_key", { name: "idle" }, owner)).usage_api_key;
    await signIn(idle);
    await page.getByRole("link", { name: "Wallets" }).click();
    await page.getByTestId("wallets").getByText(pkp).waitFor();
    expect(await page.getByRole("button", { name: "Create wallet" }).count()).to.equal(0);
    await page.getByRole("link", { name: "Run", exact: true }).click();
    expect(await page.getByRole("button", { name: "Run", exact: true }).isDisabled()).to.equal(true);
  });

  it("a deleted group or action disappears from every list and picker it was shown in", async function () {
    const { page } = b;
    await signIn(owner);
    const doomedCid = await computeCid("async function main() { return 'doomed'; }");
    await post(stack, "/add_action", { action_ipfs_cid: doomedCid, name: "doomed action", description: "" }, owner);
    const g = await post(stack, "/add_group", { group_name: "doomed group", group_description: "", pkp_ids_permitted: [], cid_hashes_permitted: [] }, owner);
    await post(stack, "/add_usage_api_key", { name: "scoped", execute_in_groups: [Number(g.group_id)] }, owner);

    // The group: listed, named in the key list, offered in the key form.
    await page.getByRole("link", { name: "Usage keys" }).click();
    const keyRow = page.getByTestId("keys").locator("tr", { hasText: "scoped" });
    await keyRow.locator("td", { hasText: "doomed group" }).waitFor();
    await page.getByRole("link", { name: "Groups" }).click();
    page.once("dialog", (d) => void d.accept());
    await page.getByTestId("groups").locator("tr", { hasText: "doomed group" }).getByRole("button", { name: "Remove" }).click();
    await page.getByTestId("groups").locator("tr", { hasText: "doomed group" }).waitFor({ state: "detached" });
    await page.getByRole("link", { name: "Usage keys" }).click();
    await keyRow.waitFor();
    await keyRow.locator("td").nth(2).filter({ hasNotText: "…" }).waitFor(); // "…" until the groups arrive
    expect(await keyRow.locator("td").nth(2).innerText()).to.equal("none"); // not "#2": the group is gone
    await keyRow.getByRole("button", { name: "Edit" }).click();
    expect(await page.getByLabel(/in doomed group$/).count()).to.equal(0);
    await page.getByRole("button", { name: "Cancel" }).click();

    // The action: listed, offered in the group form; gone from both once removed.
    await page.getByRole("link", { name: "Groups" }).click();
    await page.getByRole("button", { name: "New group" }).click();
    await page.getByLabel(/^doomed action 0x/).waitFor();
    await page.getByRole("link", { name: "Actions" }).click();
    page.once("dialog", (d) => void d.accept());
    await page.getByTestId("actions").locator("tr", { hasText: "doomed action" }).getByRole("button", { name: "Remove" }).click();
    await page.getByTestId("actions").locator("tr", { hasText: "doomed action" }).waitFor({ state: "detached" });
    await page.getByRole("link", { name: "Groups" }).click();
    await page.getByRole("button", { name: "New group" }).click();
    await page.getByLabel(/^greet v2 0x/).waitFor();
    expect(await page.getByLabel(/^doomed action 0x/).count()).to.equal(0);
    // Its detail, opened by CID, says it is no longer the account's.
    await page.evaluate((c) => (window.location.hash = `#/actions?cid=${c}`), doomedCid);
    await page.getByTestId("detail-name").filter({ hasText: "(not one of this account's actions)" }).waitFor();
  });

  it("says amounts in dollars and dates as typed: top-ups and key expiry refused in the user's units, nothing changed", async function () {
    const { page } = b;
    await page.getByRole("link", { name: "Account" }).click();
    const before = await page.getByTestId("balance").filter({ hasText: "$" }).innerText();
    const amount = page.getByLabel("Amount (USD)");
    for (const [typed, said] of [
      ["ten", "“ten” is not an amount in dollars: enter one like 10 or 12.50"],
      ["1.234", "$1.234 is not a whole number of cents: use at most two decimals, like 12.50"],
      ["150", "the amount must be at most $100.00 per top-up; you entered $150.00"],
    ]) {
      await amount.fill(typed);
      await page.getByRole("button", { name: "Add free credit" }).click();
      await page.getByRole("alert").filter({ hasText: said }).waitFor();
    }
    expect(await page.getByTestId("balance").innerText()).to.equal(before);

    await page.getByRole("link", { name: "Usage keys" }).click();
    await page.getByRole("button", { name: "New usage key" }).click();
    await page.getByLabel("Name", { exact: true }).fill("from the past");
    await page.getByLabel(/^Expires/).fill("2020-01-02T03:04");
    await page.getByRole("button", { name: "Create usage key" }).click();
    expect(await alertText(page)).to.equal("the expiry 2020-01-02 03:04 UTC is in the past: choose a later date, or none (never expires)");
    expect(await page.getByTestId("keys").locator("tr", { hasText: "from the past" }).count()).to.equal(0);
    await page.getByRole("button", { name: "Cancel" }).click();
  });

  it("every new view at 390 px and 1280 px: screenshotted, no horizontal page overflow", async function () {
    const { page } = b;
    const cid = await computeCid(GREET);
    await checkWidths(page, [`actions?cid=${cid}`, `run?cid=${cid}`, "actions", "run", "account"], (view) => `view-${view.replace(/\?cid=.*/, "-by-cid")}`);
  });
});
