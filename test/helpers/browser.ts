import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { JsonRpcProvider, Wallet, type TransactionRequest } from "ethers";
import { required } from "./required";

/** Debian's Chromium (`.ci/run` installs it when missing). */
export const CHROMIUM = process.env.VESTA_CHROMIUM ?? "/usr/bin/chromium";
/** Where screenshots go (gitignored). */
export const SHOTS = path.join(__dirname, "..", "..", "test-results", "dashboard");

/** Chromium for a suite: under CI a missing one fails the suite; locally the suite skips and says why. */
export function requireChromium(ctx: Mocha.Context): void {
  required(ctx, "Chromium", () => {
    if (!fs.existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing (install Debian's chromium package, or set VESTA_CHROMIUM)`);
  });
}

export type Browsing = { browser: Browser; context: BrowserContext; page: Page; close: () => Promise<void> };

/** Headless Chromium with the flags that work offline, on a new empty profile. */
export async function openBrowser(): Promise<Browsing> {
  const { chromium } = await import("playwright-core");
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), "vesta-chromium-"));
  // A persistent context is how playwright-core takes a user-data-dir: a fresh empty one per run.
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
    viewport: { width: 1280, height: 900 },
  });
  const page = context.pages()[0] ?? (await context.newPage());
  // Nothing may leave the machine: any request to a non-loopback host fails the test that made it.
  await context.route(/^https?:\/\/(?!127\.0\.0\.1|localhost)/, (route) => route.abort("blockedbyclient"));
  return {
    browser: context.browser()!,
    context,
    page,
    close: async () => {
      await context.close();
      fs.rmSync(profile, { recursive: true, force: true });
    },
  };
}

export async function shot(page: Page, name: string): Promise<string> {
  fs.mkdirSync(SHOTS, { recursive: true });
  const file = path.join(SHOTS, `${name}.png`);
  await page.screenshot({ path: file, fullPage: true });
  return file;
}

/**
 * Runs `body`; when it throws, screenshots `page` first (`failed-<name>.png` beside the others) and
 * adds the page's address to the error: what the page showed is what a flaky failure needs.
 */
export async function shotOnFailure<T>(page: Page, name: string, body: () => Promise<T>): Promise<T> {
  try {
    return await body();
  } catch (err) {
    const file = await shot(page, `failed-${name}`).catch(() => "(no screenshot)");
    if (err instanceof Error) err.message += `\n(the page was at ${page.url()}; screenshot: ${file})`;
    throw err;
  }
}

/**
 * An EIP-1193 provider in the page (window.ethereum), backed by a local chain account: it signs
 * typed data and sends transactions with `key`, and passes every other call to the chain's RPC.
 * Records the methods it was asked, so a test can check that a signature was requested.
 */
export async function injectWallet(context: BrowserContext, rpcUrl: string, key: string) {
  const provider = new JsonRpcProvider(rpcUrl, undefined, { staticNetwork: true, cacheTimeout: -1 });
  const wallet = new Wallet(key, provider);
  const asked: string[] = [];
  const toTx = (t: Record<string, string>): TransactionRequest => ({ to: t.to, data: t.data, value: t.value ? BigInt(t.value) : undefined, gasLimit: t.gas ? BigInt(t.gas) : undefined });
  await context.exposeFunction("__vestaWalletRpc", async (method: string, params: unknown[]) => {
    asked.push(method);
    switch (method) {
      case "eth_requestAccounts":
      case "eth_accounts":
        return [wallet.address];
      case "eth_signTypedData_v4": {
        const td = JSON.parse(params[1] as string);
        const { EIP712Domain: _domain, ...types } = td.types;
        return wallet.signTypedData(td.domain, types, td.message);
      }
      case "eth_sendTransaction":
        return (await wallet.sendTransaction(toTx(params[0] as Record<string, string>))).hash;
      default:
        return provider.send(method, params);
    }
  });
  await context.addInitScript(() => {
    const w = window as unknown as { __vestaWalletRpc: (m: string, p: unknown[]) => Promise<unknown>; ethereum: unknown };
    w.ethereum = {
      isVestaTestWallet: true,
      request: ({ method, params }: { method: string; params?: unknown[] }) => w.__vestaWalletRpc(method, params ?? []),
      on: () => undefined,
      removeListener: () => undefined,
    };
  });
  return { address: wallet.address, asked, close: () => provider.destroy() };
}

/**
 * Types `code` into the dashboard's code editor `name` (CodeMirror, once its chunk has loaded) as a
 * paste would, and waits until the form's field holds exactly that text.
 */
export async function fillCode(page: Page, name: string, code: string): Promise<void> {
  await page.locator(`[data-code-editor="${name}"] .cm-content`).fill(code);
  await page.waitForFunction(([n, c]) => (document.querySelector(`textarea[name="${n}"]`) as HTMLTextAreaElement | null)?.value === c, [name, code] as const);
}

/** Horizontal overflow of the page itself (a table may scroll inside its card, the page may not). */
export const pageOverflow = (page: Page) => page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);

/**
 * Opens each dashboard view (`#/<view>`) at 390 px and 1280 px: screenshotted as `<shotName(view)>-<width>`,
 * and an error when the page itself overflows horizontally. Leaves the page at 1280 px.
 */
export async function checkWidths(page: Page, views: string[], shotName: (view: string) => string): Promise<void> {
  for (const width of [390, 1280]) {
    await page.setViewportSize({ width, height: 900 });
    for (const view of views) {
      await page.evaluate((v) => (window.location.hash = `#/${v}`), view);
      await page.locator("main h2").first().waitFor();
      await page.waitForLoadState("networkidle");
      const overflow = await pageOverflow(page);
      if (overflow > 0) throw new Error(`${view} at ${width} px overflows the page by ${overflow} px`);
      await shot(page, `${shotName(view)}-${width}`);
    }
  }
  await page.setViewportSize({ width: 1280, height: 900 });
}
