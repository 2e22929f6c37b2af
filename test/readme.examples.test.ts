/**
 * The README's typed-client examples ("## Typed client") are real programs: each `<!-- example: NAME -->`
 * block is written to a file inside the package (so `vesta/client` resolves through the package's
 * self-reference, as for a user who installed it), type-checked with the root tsconfig's options,
 * then run in order as a child process against a local stack, each step's printed `name: value`
 * lines feeding the next one. A dropped, renamed, uncompilable or broken example fails here.
 */
import { execFile } from "node:child_process";
import crypto from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { expect } from "chai";
import { ethers } from "hardhat";
import pino from "pino";
import ts from "typescript";
import { loadBillingConfig } from "../billing/config";
import { startRelayer, type RunningRelayer } from "../relayer/server";
import { deriveWallet, paths } from "../executor/keys/provider";
import { call, startStack, type Stack } from "./helpers/relayer";
import { startStripeDouble, type StripeDouble } from "./helpers/stripeDouble";

const ROOT = path.join(__dirname, "..");
const README = path.join(ROOT, "README.md");

/** Every example the README must keep, in the order they run (later ones use earlier ones' output). */
const EXPECTED = ["create-account", "usage-key", "wallet", "group", "action", "run", "billing", "chain-secured"] as const;
type Name = (typeof EXPECTED)[number];

type Example = { name: string; code: string; readmeLine: number };

/** The `<!-- example: NAME -->` blocks of the README, each followed by its ```ts block. */
function readmeExamples(text: string): Example[] {
  const out: Example[] = [];
  const marker = /<!-- example: (\S+) -->/g;
  for (let m = marker.exec(text); m; m = marker.exec(text)) {
    const after = text.slice(m.index + m[0].length);
    const block = /^\s*\n```ts\n([\s\S]*?)\n```/.exec(after);
    const line = text.slice(0, m.index).split("\n").length;
    if (!block) throw new Error(`README.md:${line}: the marker "${m[0]}" is not followed by a \`\`\`ts block`);
    const codeLine = line + after.slice(0, block.index).split("\n").length + 1; // the line after ```ts
    out.push({ name: m[1], code: `${block[1]}\n`, readmeLine: codeLine });
  }
  return out;
}

/** Type-checks `files` with the root tsconfig's options; returns the diagnostics, formatted. */
function typeCheck(files: Map<string, Example>): string[] {
  const cfg = ts.readConfigFile(path.join(ROOT, "tsconfig.json"), ts.sys.readFile);
  if (cfg.error) throw new Error(ts.flattenDiagnosticMessageText(cfg.error.messageText, "\n"));
  const { options } = ts.parseJsonConfigFileContent(cfg.config, ts.sys, ROOT);
  // The root's "moduleResolution": "node" (node10) ignores package.json "exports", so it cannot resolve
  // `vesta/client` (nor could a user's project with that setting). Node16 resolution is what Node
  // itself does for these CommonJS scripts; everything else (strict, target, ...) is the root's.
  const program = ts.createProgram([...files.keys()], {
    ...options,
    module: ts.ModuleKind.Node16,
    moduleResolution: ts.ModuleResolutionKind.Node16,
    rootDir: ROOT, // the examples live inside the package, which resolves its own exports map
    noEmit: true,
  });
  return ts.getPreEmitDiagnostics(program).map((d) => {
    const text = ts.flattenDiagnosticMessageText(d.messageText, "\n");
    const example = d.file && files.get(path.resolve(d.file.fileName));
    if (!d.file || d.start === undefined) return `TS${d.code}: ${text}`;
    const { line, character } = d.file.getLineAndCharacterOfPosition(d.start);
    const where = example ? `README.md:${example.readmeLine + line}:${character + 1} (example ${example.name})` : `${path.relative(ROOT, d.file.fileName)}:${line + 1}:${character + 1}`;
    return `${where} TS${d.code}: ${text}`;
  });
}

type Output = { stdout: string; stderr: string; values: Record<string, string> };

/** The `name: value` lines of an example's output. */
const valuesOf = (stdout: string) => Object.fromEntries([...stdout.matchAll(/^([a-z_]+): (.*)$/gm)].map((m) => [m[1], m[2].trim()]));

describe("README: the typed-client examples", function () {
  this.timeout(600_000);
  let dir = "";
  let stack: Stack | undefined;
  const files = new Map<Name, string>();
  const out = new Map<string, Output>();

  /** Runs example `name` as `node -r ts-node/register/transpile-only` with the given VESTA_* variables. */
  async function run(name: Name, env: Record<string, string>, label: string = name): Promise<Output> {
    const file = files.get(name);
    if (!file) throw new Error(`example ${name} was not written (see the first test's failure)`);
    const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^(VESTA_|STRIPE_)/.test(k)));
    const result = await new Promise<{ failure?: string; stdout: string; stderr: string }>((resolve) => {
      execFile(
        process.execPath,
        ["--require", "ts-node/register/transpile-only", file],
        { cwd: ROOT, env: { ...clean, ...env }, timeout: 120_000, maxBuffer: 4 * 1024 * 1024 },
        (err, stdout, stderr) => {
          const failure = err && (err.killed ? `was killed (${err.signal ?? "timeout"})` : `exited with ${err.code ?? err.message}`);
          resolve({ failure: failure || undefined, stdout, stderr });
        },
      );
    });
    if (result.failure) {
      throw new Error(`example ${label} (${path.relative(ROOT, file)}) ${result.failure}\n--- stdout ---\n${result.stdout}--- stderr ---\n${result.stderr}`);
    }
    const o = { stdout: result.stdout, stderr: result.stderr, values: valuesOf(result.stdout) };
    out.set(label, o);
    return o;
  }

  /** A value printed by an earlier step, or a clear failure when that step did not give it. */
  function from(label: string, key: string): string {
    const o = out.get(label);
    if (!o) throw new Error(`needs the output of example ${label}, which did not run successfully`);
    const v = o.values[key];
    if (!v) throw new Error(`example ${label} printed no "${key}: ..." line:\n${o.stdout}`);
    return v;
  }

  /** A printed balance, `name: 993 ($9.93)`, in cents. */
  function cents(label: string, key: string): number {
    const v = from(label, key);
    const m = /^(-?\d+) \((\$[\d,]+\.\d\d (credit|owed)|No credits)\)$/.exec(v);
    if (!m) throw new Error(`example ${label} printed "${key}: ${v}", not "<cents> ($<dollars> credit)" or "<cents> (No credits)"`);
    return Number(m[1]);
  }

  const url = () => stack!.relayer.url;
  const accountKey = () => from("create-account", "api_key");
  const keyHash = (key: string) => BigInt(ethers.keccak256(ethers.toUtf8Bytes(key)));

  before(async function () {
    for (const f of ["dist/client/index.js", "dist/client/index.d.ts"]) {
      if (!fs.existsSync(path.join(ROOT, f))) throw new Error(`${f} is missing: run \`npm run build:client\` first (npm test does it)`);
    }
    fs.mkdirSync(path.join(ROOT, ".vesta"), { recursive: true });
    // Inside the package (not os.tmpdir()), so that `vesta/client` resolves as it does for a user.
    dir = fs.mkdtempSync(path.join(ROOT, ".vesta", "readme-examples-"));
  });

  after(async function () {
    await stack?.stop();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it("has every expected example, once each, and no example the test does not run", function () {
    const examples = readmeExamples(fs.readFileSync(README, "utf8"));
    const names = examples.map((e) => e.name);
    const missing = EXPECTED.filter((n) => !names.includes(n));
    expect(missing, `README.md lacks the typed-client example(s) ${missing.join(", ")} (markers <!-- example: NAME --> before a \`\`\`ts block)`).to.deep.equal([]);
    const repeated = names.filter((n, i) => names.indexOf(n) !== i);
    expect(repeated, "README.md repeats example names").to.deep.equal([]);
    const unknown = names.filter((n) => !(EXPECTED as readonly string[]).includes(n));
    expect(unknown, "README.md has examples this test does not run: add them to EXPECTED and to a step below").to.deep.equal([]);
    for (const e of examples) {
      expect(e.code, `example ${e.name} must import the client from "vesta/client"`).to.match(/from "vesta\/client"/);
      const imports = [...e.code.matchAll(/from "([^"]+)"/g)].map((m) => m[1]);
      expect(imports.filter((i) => i !== "vesta/client" && i !== "ethers"), `example ${e.name} imports only vesta/client and public packages`).to.deep.equal([]);
      const lines = e.code.trimEnd().split("\n").length;
      expect(lines, `example ${e.name} is ${lines} lines: keep it short`).to.be.at.most(30);
      const file = path.join(dir, `${e.name}.ts`);
      fs.writeFileSync(file, e.code);
      files.set(e.name as Name, file);
    }
  });

  it("type-checks every example (strict, the root tsconfig's options)", function () {
    expect(files.size, "no examples were written").to.equal(EXPECTED.length);
    const byFile = new Map<string, Example>();
    const examples = readmeExamples(fs.readFileSync(README, "utf8"));
    for (const [name, file] of files) byFile.set(path.resolve(file), examples.find((e) => e.name === name)!);
    const diagnostics = typeCheck(byFile);
    expect(diagnostics, `the README examples do not compile:\n${diagnostics.join("\n")}`).to.deep.equal([]);
  });

  describe("run in order against a local stack", function () {
    before(async function () {
      // Local billing with npm start's free credit per new account.
      stack = await startStack({ env: { VESTA_FREE_CREDIT_CENTS: "1000" } });
    });

    it("create-account: prints the account key once, with a warning, and the key works", async function () {
      const o = await run("create-account", { VESTA_URL: url() });
      expect(o.stdout).to.match(/shown only once/i);
      expect(accountKey()).to.match(/^[A-Za-z0-9+/]{43}=$/);
      expect(ethers.isAddress(from("create-account", "admin_wallet"))).to.equal(true);
      const exists = await call(stack!, "GET", "/account_exists", { key: accountKey() });
      expect(exists, "the printed key is a valid account key").to.deep.equal({ status: 200, body: true });
    });

    it("usage-key: adds a usage key with execute on all groups and lists it", async function () {
      const o = await run("usage-key", { VESTA_URL: url(), VESTA_API_KEY: accountKey() });
      const usageKey = from("usage-key", "usage_api_key");
      const id = ethers.toBeHex(keyHash(usageKey), 32);
      expect(o.stdout, "the listing shows the new key by its hash").to.include(`- bot (hash ${id}): execute in groups [0]`);
      const listed = await call(stack!, "GET", "/list_api_keys", { key: accountKey() });
      expect(listed.body.find((k: { id: string }) => k.id === id), JSON.stringify(listed.body)).to.include({ name: "bot", can_create_groups: false, can_create_pkps: false });
    });

    it("wallet: creates a wallet registered to the account and lists it", async function () {
      const o = await run("wallet", { VESTA_URL: url(), VESTA_API_KEY: accountKey() });
      const wallet = from("wallet", "wallet");
      expect(ethers.isAddress(wallet)).to.equal(true);
      expect(o.stdout).to.include(`- signer: ${wallet}`);
      const view = await stack!.config.getWallet(keyHash(accountKey()), wallet);
      expect(view.walletAddress, "the wallet is registered on chain to the account").to.equal(wallet);
    });

    it("group: creates a group listing the wallet", async function () {
      const o = await run("group", { VESTA_URL: url(), VESTA_API_KEY: accountKey(), VESTA_WALLET: from("wallet", "wallet") });
      const groupId = from("group", "group_id");
      expect(groupId).to.match(/^[1-9]\d*$/);
      expect(o.stdout).to.include(`- group ${groupId}: signers`);
      expect(from("group", "group_wallets")).to.equal(from("wallet", "wallet"));
      const members = await call(stack!, "GET", `/list_wallets_in_group?group_id=${groupId}`, { key: accountKey() });
      expect(members.body.map((w: { wallet_address: string }) => w.wallet_address), JSON.stringify(members.body)).to.deep.equal([from("wallet", "wallet")]);
    });

    it("action: registers the code's CID and lists it in the group", async function () {
      const o = await run("action", { VESTA_URL: url(), VESTA_API_KEY: accountKey(), VESTA_GROUP_ID: from("group", "group_id") });
      const cid = from("action", "action_cid");
      expect(cid).to.match(/^Qm[1-9A-HJ-NP-Za-km-z]{44}$/);
      const hashed = ethers.keccak256(ethers.toUtf8Bytes(cid));
      expect(o.stdout).to.include(`- sign: hashed_cid ${hashed}`);
      const inGroup = await call(stack!, "GET", `/list_actions?group_id=${from("group", "group_id")}`, { key: accountKey() });
      expect(inGroup.body.map((a: { hashed_cid: string }) => a.hashed_cid), JSON.stringify(inGroup.body)).to.deep.equal([hashed]);
    });

    /** Runs the run example as `key` and checks that the wallet signed `message`. */
    async function expectSigned(key: string, label: string) {
      const wallet = from("wallet", "wallet");
      const message = `readme example ${label} ${crypto.randomUUID()}`;
      await run("run", { VESTA_URL: url(), VESTA_API_KEY: key, VESTA_WALLET: wallet, VESTA_MESSAGE: message }, label);
      const response = JSON.parse(from(label, "response")) as { address: string; signature: string };
      expect(response.address, "the action signed with the wallet").to.equal(wallet);
      expect(ethers.verifyMessage(message, response.signature), "the signature recovers to the wallet").to.equal(wallet);
      expect(from(label, "logs")).to.equal(`signing as ${wallet}`);
      expect(from(label, "ipfs_id"), "the run example's code is the action example's (same CID), which the group lists").to.equal(from("action", "action_cid"));
    }

    it("run: the account key runs the code and the wallet signs the message", async function () {
      await expectSigned(accountKey(), "run");
    });

    it("run: the usage key runs it too, through the group listing the action and the wallet", async function () {
      await expectSigned(from("usage-key", "usage_api_key"), "run (usage key)");
    });

    it("billing (local mode): shows the balance and tops it up by 500 cents", async function () {
      await run("billing", { VESTA_URL: url(), VESTA_API_KEY: accountKey() });
      const before = cents("billing", "credit_before_cents");
      expect(before, "the free credit minus what the earlier steps spent").to.be.within(900, 999);
      expect(cents("billing", "credit_cents")).to.equal(before + 500);
      const now = await call(stack!, "GET", "/billing/balance", { key: accountKey() });
      expect(now.body.credit_cents).to.equal(before + 500);
    });

    it("chain-secured: a wallet's CreateWallet signature mints a wallet of its account, which it registers on chain", async function () {
      const [funder] = await ethers.getSigners();
      const owner = ethers.Wallet.createRandom().connect(ethers.provider);
      await (await funder.sendTransaction({ to: owner.address, value: ethers.parseEther("1") })).wait();
      await run("chain-secured", { VESTA_URL: url(), VESTA_WALLET_KEY: owner.privateKey });
      const accountHash = BigInt(ethers.solidityPackedKeccak256(["address"], [owner.address]));
      expect(from("chain-secured", "owner")).to.equal(owner.address);
      expect(BigInt(from("chain-secured", "account_hash"))).to.equal(accountHash);
      const minted = from("chain-secured", "wallet_address");
      const derivationPath = BigInt(from("chain-secured", "derivation_path"));
      const derived = await deriveWallet(stack!.relayer.ctx.keys, paths.pkp(accountHash, derivationPath));
      expect(minted, "the minted wallet's key is derived for the signer's account and that path").to.equal(derived.address);
      // The printed next step, done by the owner: its account on chain, then the wallet registered.
      const config = stack!.config.connect(owner);
      await (await config.newChainSecuredAccount("readme", "")).wait();
      await (await config.registerWalletDerivation(accountHash, minted, derivationPath, "minted", "")).wait();
      expect((await stack!.config.getWallet(accountHash, minted)).derivationPath).to.equal(derivationPath);
    });

    describe("billing (Stripe mode, against the Stripe test double)", function () {
      let double: StripeDouble | undefined;
      let stripeRelayer: RunningRelayer | undefined;
      let dataDir = "";
      before(async function () {
        double = await startStripeDouble();
        dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "vesta-readme-stripe-"));
        const billing = loadBillingConfig(double.env()).config;
        stripeRelayer = await startRelayer({ ...stack!.relayerConfig, port: 0, dataDir, billing }, pino({ level: "silent" }));
      });
      after(async function () {
        await stripeRelayer?.close();
        await double?.close();
        if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
      });

      it("creates a payment intent instead of free credit, and confirms it once paid", async function () {
        const env = { VESTA_URL: stripeRelayer!.url, VESTA_API_KEY: accountKey() };
        const first = await run("billing", env, "billing (stripe)");
        expect(first.values.credit_cents, "no free credit where cards are taken").to.equal(undefined);
        const intentId = from("billing (stripe)", "payment_intent_id");
        expect(from("billing (stripe)", "client_secret")).to.match(new RegExp(`^${intentId}_secret_`));
        expect(double!.intents.get(intentId), `the double has no intent ${intentId}`).to.include({ amount: 500 });
        const before = cents("billing (stripe)", "credit_before_cents");
        double!.succeed(intentId); // the card payment in the browser
        await run("billing", { ...env, VESTA_PAYMENT_INTENT_ID: intentId }, "billing (stripe, confirm)");
        expect(cents("billing (stripe, confirm)", "credit_cents")).to.equal(before + 500);
      });
    });
  });
});
