/**
 * The dashboard's Triggers and Runs tabs in Debian's Chromium (playwright-core), against a real
 * relayer (Hardhat chain, sandbox) and a real triggers service: signing in to triggers by its e-mail
 * link, a webhook trigger created from the account's action and a usage key, fired over HTTP as curl
 * would, its run inspected; pause, edit, a failing trigger seen at a glance, the cron preview and the
 * chain filters checked as typed, the Runs tab over list_runs, the warning before removing a key a
 * trigger uses; then every tab at 390 px and 1280 px, screenshotted, with no horizontal page overflow.
 */
import { expect } from "chai";
import type { Page } from "playwright-core";
import { keccak256, toUtf8Bytes } from "ethers";
import { keyHash } from "../protocol/usageKeySeal";
import { computeCid } from "../executor/cid";
import { startStack, type Stack } from "./helpers/relayer";
import { checkWidths, fillCode, openBrowser, requireChromium, shot, type Browsing } from "./helpers/browser";
import { startHarness, until, type Harness } from "./helpers/triggers";

const ECHO = `async function main(params) {
  console.log("webhook said", params.event.hello);
  return { echoed: params.event.hello, greeting: params.greeting };
}`;
const BOOM = `async function main() {
  throw new Error("boom from the trigger");
}`;

async function post(url: string, body: unknown, key?: string) {
  const res = await fetch(url, { method: "POST", headers: { "content-type": "application/json", ...(key ? { "x-api-key": key } : {}) }, body: JSON.stringify(body) });
  return { status: res.status, body: await res.json() };
}

/** Clicks `refresh` until `ready` holds (a run is done in the background). */
async function refreshUntil(page: Page, refresh: string, ready: () => Promise<boolean>, what: string) {
  await until(async () => (await ready()) || (await page.getByRole("button", { name: refresh, exact: true }).click(), false), 30_000, what);
}


describe("dashboard in a browser: triggers, runs, phone width", function () {
  this.timeout(300_000);
  let stack: Stack;
  let triggers: Harness;
  let b: Browsing;
  let accountKey: string;
  let usageKey: string;

  before(async function () {
    requireChromium(this);
    stack = await startStack();
    triggers = await startHarness({ TRIGGERS_CORE_URL: stack.relayer.url });
    stack.relayer.ctx.config.dashboard.triggersUrl = triggers.svc.url;
    stack.relayer.ctx.config.dashboard.explorerUrl = "https://explorer.example";
    b = await openBrowser();
  });
  afterEach(async function () {
    if (this.currentTest?.state === "failed" && b) await shot(b.page, `failed-${this.currentTest.title.slice(0, 40).replace(/\W+/g, "-")}`);
  });
  after(async () => {
    await b?.close();
    await triggers?.stop();
    await stack?.stop();
  });

  it("creates a webhook trigger from the account's action and a usage key, fires it over HTTP and inspects its run", async function () {
    const { page } = b;
    accountKey = (await post(`${stack.api}/new_account`, { account_name: "automation" })).body.api_key;
    await page.goto(`${stack.relayer.url}/dashboard/`);
    await page.getByLabel("Account key or usage key").fill(accountKey);
    await page.getByRole("button", { name: "Sign in" }).click();
    // The footer links to the API explorer and the triggers guide; the page has a favicon.
    expect(await page.getByRole("link", { name: "API explorer" }).getAttribute("href")).to.equal(`${stack.relayer.url}/core/v1/swagger-ui/`);
    expect(await page.getByRole("link", { name: "Triggers guide (SKILL.md)" }).getAttribute("href")).to.equal(`${triggers.svc.url}/SKILL.md`);
    expect(await page.locator('link[rel="icon"]').getAttribute("href")).to.match(/^data:image\/svg\+xml,/);

    // The action, added in the dashboard (so this browser knows its code by CID).
    await page.getByRole("link", { name: "Actions" }).click();
    await page.getByLabel("Name", { exact: true }).fill("echo");
    await fillCode(page, "action_code", ECHO);
    await page.getByRole("button", { name: "Add action" }).click();
    const cid = await page.getByTestId("action-cid").innerText();
    // A group with it and with the failing action, and a usage key that may run them (over the API, as a script would).
    const cidHash = (c: string) => keccak256(toUtf8Bytes(c));
    const group = await post(`${stack.api}/add_group`, { group_name: "automation", group_description: "", pkp_ids_permitted: [], cid_hashes_permitted: [cidHash(cid), cidHash(await computeCid(BOOM))] }, accountKey);
    expect(group.status).to.equal(200);
    const key = await post(`${stack.api}/add_usage_api_key`, { name: "trigger bot", execute_in_groups: [Number(group.body.group_id)] }, accountKey);
    usageKey = key.body.usage_api_key;

    // Triggers: signed out of the triggers service, the tab asks for the e-mail; its link comes back here.
    await page.getByRole("link", { name: "Triggers", exact: true }).click();
    await page.getByLabel("E-mail").fill("automation@example.com");
    const mailed = triggers.links.length;
    await page.getByRole("button", { name: "Send me a sign-in link" }).click();
    await page.getByRole("status").waitFor();
    expect(await page.getByLabel("E-mail").count()).to.equal(0); // the form is gone once sent
    await page.goto(triggers.links[mailed]);
    expect(page.url()).to.equal(`${stack.relayer.url}/dashboard/#/triggers`);
    expect(await page.getByTestId("triggers-user").innerText()).to.equal("automation@example.com");
    await page.getByTestId("triggers").getByText("No triggers yet.").waitFor();

    // A webhook trigger: the action picked from the account's actions, the usage key's value pasted (checked against its row's hash).
    await page.getByRole("button", { name: "New trigger" }).click();
    await page.getByRole("button", { name: "Create trigger" }).click();
    expect(await page.getByRole("alert").first().innerText()).to.equal("give the trigger a name");
    await page.getByLabel("Trigger name").fill("echo hook");
    await page.locator('select[name="trigger_action"]').selectOption({ label: "echo" });
    await page.waitForFunction((code) => (document.querySelector('textarea[name="trigger_code"]') as HTMLTextAreaElement)?.value === code, ECHO);
    await page.getByLabel("Default params").fill('{ "greeting": "hi" }');
    await page.locator('select[name="trigger_key"]').selectOption({ index: 1 });
    await page.getByLabel(/^Usage key value/).fill(accountKey);
    expect(await page.getByText("this value is not the chosen usage key (its hash differs)").count()).to.equal(1);
    await page.getByLabel(/^Usage key value/).fill(usageKey);
    await page.getByRole("button", { name: "Create trigger" }).click();
    const created = await page.getByRole("status").innerText();
    const webhookUrl = /Its webhook URL: (\S+)$/.exec(created)![1];
    expect(webhookUrl).to.match(new RegExp(`^${triggers.svc.url}/webhook/trg_[0-9a-f]{24}$`));
    const row = page.getByTestId("trigger-row").filter({ hasText: "echo hook" });
    await row.waitFor();
    expect(await row.locator("td").allInnerTexts()).to.deep.equal(["echo hook", "webhook", "active", "never", "trigger bot", "RunsEditPauseCopy URLDelete"]);
    expect(await page.getByLabel("Trigger name").count()).to.equal(0); // the form is closed (and fresh when opened again)

    // Fired as curl would: POST the URL with a JSON body.
    const fired = await post(webhookUrl, { hello: "world" });
    expect(fired.status).to.equal(202);
    // The list refreshes by itself (every 10 s): the run shows in the trigger's row with no click.
    await row.getByTestId("trigger-last-run").locator(".badge.success").waitFor({ timeout: 25_000 });
    await row.getByRole("button", { name: "Runs" }).click();
    const runs = page.getByTestId("trigger-runs");
    await refreshUntil(page, "Refresh", async () => (await runs.locator(".badge.success").count()) === 1, "the webhook run");
    await runs.getByTestId("run-row").first().getByRole("button").click();
    const detail = runs.getByTestId("run-detail");
    expect(JSON.parse(await detail.getByTestId("run-detail-response").innerText())).to.deep.equal({ echoed: "world", greeting: "hi" });
    const params = JSON.parse(await detail.getByTestId("run-params").innerText());
    expect([params.event, params.greeting]).to.deep.equal([{ hello: "world" }, "hi"]);
    expect(await detail.getByTestId("run-detail-logs").innerText()).to.contain("webhook said world");
    expect(await detail.getByTestId("run-attempts").innerText()).to.equal("1");
    expect(await detail.getByTestId("run-duration").innerText()).to.match(/^\d+ ms$|^\d+\.\d\d s$/);
    await shot(page, "20-trigger-run");

    // Paused, the webhook is refused; resumed, it runs again.
    await row.getByRole("button", { name: "Pause" }).click();
    await row.locator("td", { hasText: "paused" }).waitFor();
    expect((await post(webhookUrl, { hello: "paused" })).status).to.equal(409);
    await row.getByRole("button", { name: "Resume" }).click();
    await row.locator("td", { hasText: "active" }).waitFor();
    expect((await post(webhookUrl, { hello: "again" })).status).to.equal(202);

    // Edited: the new name everywhere it is shown.
    await row.getByRole("button", { name: "Edit" }).click();
    await page.getByLabel("Trigger name").fill("echo hook v2");
    await page.getByRole("button", { name: "Save trigger" }).click();
    await page.getByTestId("trigger-row").filter({ hasText: "echo hook v2" }).waitFor();
    expect(await page.getByRole("status").innerText()).to.equal("Saved “echo hook v2”.");
  });

  it("shows a failing trigger at a glance, with the error and its stack; deleting it removes it from the list", async function () {
    const { page } = b;
    await page.getByRole("button", { name: "New trigger" }).click();
    await page.getByLabel("Trigger name").fill("boom hook");
    // Code that does not parse is refused before anything is saved, with where.
    await fillCode(page, "trigger_code", "async function main() {\n  throw new Error(\"boom\";\n}");
    await page.locator('select[name="trigger_key"]').selectOption({ index: 1 });
    await page.getByLabel(/^Usage key value/).fill(usageKey);
    await page.getByRole("button", { name: "Create trigger" }).click();
    await page.getByRole("alert").filter({ hasText: /^the code does not parse: syntax error at line 2, column 25 / }).waitFor();
    expect(await page.getByTestId("trigger-row").filter({ hasText: "boom hook" }).count()).to.equal(0);
    await fillCode(page, "trigger_code", BOOM);
    await page.locator('select[name="trigger_key"]').selectOption({ index: 1 });
    await page.getByLabel(/^Usage key value/).fill(usageKey);
    await page.getByRole("button", { name: "Create trigger" }).click();
    const url = /Its webhook URL: (\S+)$/.exec(await page.getByRole("status").innerText())![1];
    expect((await post(url, { hello: "boom" })).status).to.equal(202);
    const row = page.getByTestId("trigger-row").filter({ hasText: "boom hook" });
    await row.getByRole("button", { name: "Runs" }).click();
    await refreshUntil(page, "Refresh", async () => (await page.getByTestId("trigger-runs").locator(".badge.failed").count()) === 1, "the failed run");
    expect(await page.getByTestId("failed-count").innerText()).to.equal("1 failed run on this page");
    await page.getByTestId("trigger-runs").getByTestId("run-row").first().getByRole("button").click();
    const error = await page.getByTestId("run-error").innerText();
    expect(error).to.contain("boom from the trigger");
    expect(error).to.match(/\bat main\b/);
    // The list marks the trigger whose last run failed (after a reload of the list).
    await page.reload();
    const failedRow = page.getByTestId("trigger-row").filter({ hasText: "boom hook" });
    await failedRow.locator(".badge.failed").waitFor();
    expect(await failedRow.getAttribute("class")).to.equal("failed");
    await shot(page, "21-trigger-failed");

    page.once("dialog", (d) => void d.accept());
    await failedRow.getByRole("button", { name: "Delete" }).click();
    await page.getByRole("status").filter({ hasText: "Deleted “boom hook”." }).waitFor();
    // The status is set before the list's reload answers (triggersTab.tsx): the row goes when it does.
    await failedRow.waitFor({ state: "detached" });
    expect(await page.getByTestId("trigger-row").allInnerTexts()).to.have.length(1);
    expect((await post(url, {})).status).to.equal(404);
  });

  it("previews a cron in words with its next firings, and checks chain filters as they are typed", async function () {
    const { page } = b;
    await page.getByRole("button", { name: "New trigger" }).click();
    await page.locator('select[name="trigger_kind"]').selectOption("schedule");
    await page.getByLabel(/^Cron/).fill("30 9 * * 1");
    const preview = await page.getByTestId("cron-preview").innerText();
    expect(preview).to.match(/^At 09:30, only on Monday \(UTC\)\. Next: (\d{4}-\d\d-\d\d 09:30:00 UTC, ){2}\d{4}-\d\d-\d\d 09:30:00 UTC$/);
    const next = [...preview.matchAll(/(\d{4}-\d\d-\d\d) 09:30:00/g)].map((m) => new Date(`${m[1]}T09:30:00Z`));
    expect(next.map((d) => d.getUTCDay())).to.deep.equal([1, 1, 1]);
    expect(next[0].getTime()).to.be.greaterThan(Date.now());
    await page.getByLabel(/^Cron/).fill("30 9 * *");
    expect(await page.getByRole("alert").first().innerText()).to.equal("a cron needs 5 fields (minute hour day month weekday), or 6 with seconds first; this has 4");
    await page.getByLabel(/^Cron/).fill("61 * * * *");
    expect(await page.getByRole("alert").first().innerText()).to.match(/^not a cron: /);

    await page.locator('select[name="trigger_kind"]').selectOption("chain_event");
    const problem = (text: string) => page.getByRole("alert").filter({ hasText: text });
    await page.getByLabel("Contract address").fill("0x1234");
    expect(await problem("the contract address is 0x and 40 hex digits").count()).to.equal(1);
    await page.getByLabel("Contract address").fill("0x" + "ab".repeat(20));
    expect(await problem("the contract address").count()).to.equal(0);
    await page.getByLabel("Event signature").fill("Transfer(address indexed from,");
    expect(await problem("the event signature reads like").count()).to.equal(1);
    await page.getByLabel("Event signature").fill("Transfer(address indexed from, address indexed to, uint256 value)");
    expect(await problem("the event signature").count()).to.equal(0);
    await page.getByLabel(/^Topic 2 filter/).fill("0xabc");
    expect(await problem("topic 2: each topic is 0x and 64 hex digits").count()).to.equal(1);
    await page.getByLabel(/^Topic 2 filter/).fill(`0x${"00".repeat(12)}${"ab".repeat(20)}, 0x${"11".repeat(32)}`);
    expect(await problem("topic 2").count()).to.equal(0);
    await page.getByLabel(/^Confirmations/).fill("-1");
    expect(await problem("confirmations is a whole number from 0 to 1000").count()).to.equal(1);
    await shot(page, "22-trigger-chain-form");
    await page.getByRole("button", { name: "Cancel" }).click();
  });

  it("warns before removing a usage key a trigger runs with", async function () {
    const { page } = b;
    await page.getByRole("link", { name: "Usage keys" }).click();
    const row = page.getByTestId("keys").locator("tr", { hasText: "trigger bot" });
    const said = new Promise<string>((resolve) => page.once("dialog", (d) => (resolve(d.message()), void d.dismiss())));
    await row.getByRole("button", { name: "Remove" }).click();
    expect(await said).to.equal(`Usage key "trigger bot" is used by trigger "echo hook v2": its runs fail once it is removed. Remove it anyway?`);
    await row.waitFor();
    const [, , active] = await stack.config.resolveApiKey(keyHash(usageKey));
    expect(active).to.equal(true);
  });

  it("lists the account's runs in the Runs tab (list_runs): cost, logs, the failed one's error; filtered by status", async function () {
    const { page } = b;
    await page.getByRole("link", { name: "Runs", exact: true }).click();
    const list = page.getByTestId("core-runs");
    await list.getByTestId("run-row").nth(2).waitFor(); // echo twice, boom once
    expect(await list.locator(".badge.failed").count()).to.equal(1);
    await page.locator('select[name="runs_status"]').selectOption("failed");
    await page.waitForFunction(() => document.querySelectorAll('[data-testid="core-runs"] [data-testid="run-row"]').length === 1);
    await list.getByTestId("run-row").first().getByRole("button").click();
    expect(await list.getByTestId("run-error").innerText()).to.contain("boom from the trigger");
    expect(await list.getByTestId("run-cost").innerText()).to.match(/^\$\d+\.\d\d$/);
    // A half-typed CID filters nothing, and says so.
    await page.getByLabel("Action CID").fill("Qm123");
    expect(await page.getByRole("note").innerText()).to.equal("Not filtering yet: the CID is not a whole CID yet (Qm… or b…).");
    await shot(page, "23-runs");
  });

  it("shows the usage: charges by day and kind, credit over time as a chart", async function () {
    const { page } = b;
    await page.getByRole("link", { name: "Usage", exact: true }).click();
    const today = page.getByTestId("usage-days").locator("tr", { hasText: new Date().toISOString().slice(0, 10) });
    await today.waitFor();
    const cells = await today.locator("td").allInnerTexts();
    expect(cells[1]).to.match(/^3 · \$\d+\.\d\d$/); // the echo trigger's two runs and the failing one
    expect(cells[2]).to.match(/^[1-9]\d* · \$\d+\.\d\d$/); // the action, the group and the key were relayed writes
    await page.getByTestId("usage-chart").locator("canvas").waitFor();
    expect(await page.getByTestId("usage-totals").innerText()).to.match(/^Credit now \$[\d,]+\.\d\d\. In these 30 days: runs \$\d+\.\d\d, relayed writes \$\d+\.\d\d, top-ups \$0\.00\.$/);
    await shot(page, "24-usage");
  });

  it("shows the audit log from the contract's events, each linked to its transaction on the explorer", async function () {
    const { page } = b;
    await page.getByRole("link", { name: "Audit log" }).click();
    const rows = page.getByTestId("audit-row");
    await rows.first().waitFor();
    const texts = await rows.allInnerTexts();
    expect(texts.at(-1)).to.contain("UsageApiKeyAuthorized"); // the oldest: the account's creation
    const group = rows.filter({ hasText: "GroupCreated" });
    expect(await group.innerText()).to.contain("name: automation");
    const href = (await group.getByRole("link").getAttribute("href"))!;
    const tx = /^https:\/\/explorer\.example\/tx\/(0x[0-9a-f]{64})$/.exec(href)![1];
    const receipt = (await stack.relayer.ctx.chain.provider.getTransactionReceipt(tx))!;
    expect(receipt.logs.some((l) => l.topics[1] === keccak256(toUtf8Bytes(accountKey)))).to.equal(true);
    await shot(page, "25-audit");
  });

  it("every tab at 390 px and 1280 px: screenshotted, no horizontal page overflow", async function () {
    const { page } = b;
    await checkWidths(page, ["account", "keys", "wallets", "groups", "actions", "run", "runs", "triggers", "usage", "audit"], (tab) => `tab-${tab}`);
  });

  it("a triggers service on another site than the dashboard: the tab warns, and indeed the browser withholds its SameSite=Lax sign-in cookie", async function () {
    const { page, context } = b;
    const sameSiteUrl = triggers.svc.url;
    // localhost and 127.0.0.1 are two sites to a browser (ports never count): the same service, named from another site.
    const crossSite = sameSiteUrl.replace("127.0.0.1", "localhost");
    stack.relayer.ctx.config.dashboard.triggersUrl = crossSite;
    try {
      await context.clearCookies();
      await page.goto(`${stack.relayer.url}/dashboard/#/triggers`);
      await page.reload(); // a new page load reads the dashboard's settings again
      await page.getByTestId("triggers-cross-site").waitFor();
      expect(await page.getByTestId("triggers-cross-site").innerText()).to.contain("on another site than this dashboard");
      await page.getByLabel("E-mail").fill("crosssite@example.com");
      const n = triggers.links.length;
      await page.getByRole("button", { name: "Send me a sign-in link" }).click();
      await page.getByRole("status").waitFor();
      await page.goto(triggers.links[n].replace("127.0.0.1", "localhost")); // signed in at the triggers service's site...
      expect(page.url()).to.equal(`${stack.relayer.url}/dashboard/#/triggers`);
      expect((await context.cookies(crossSite)).length, "the session cookie is set for the triggers site").to.equal(1);
      // ...but the dashboard's requests to it go without the cookie: still signed out, and told why.
      await page.getByLabel("E-mail").waitFor();
      expect(await page.getByTestId("triggers-user").count()).to.equal(0);
      await page.getByTestId("triggers-cross-site").waitFor();
      await shot(page, "26-triggers-cross-site");
    } finally {
      stack.relayer.ctx.config.dashboard.triggersUrl = sameSiteUrl;
    }
    // On the same site, no warning.
    await page.reload();
    await page.getByLabel("E-mail").waitFor();
    expect(await page.getByTestId("triggers-cross-site").count()).to.equal(0);
  });
});
