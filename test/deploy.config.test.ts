import { expect } from "chai";
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { BUILT_FILES, serveProblem } from "../scripts/serve";

const ROOT = path.join(__dirname, "..");
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { healthUrl } = require("../scripts/healthcheck.js") as { healthUrl: (env: Record<string, string>, cmdline: string) => string };

/** Only these variables from the test's own environment reach the child (no VESTA_* or DATABASE_URL of the machine). */
const baseEnv = () => ({ PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? os.tmpdir() });

type Exit = { code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string };

/** Runs the image's entry point (scripts/serve.ts) as the Dockerfile does; `until` stops it (SIGTERM) once its output matches. */
function serve(args: string[], env: Record<string, string>, until?: RegExp): Promise<Exit> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--require", "ts-node/register/transpile-only", "scripts/serve.ts", ...args], { cwd: ROOT, env: { ...baseEnv(), ...env }, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    let stopping = false;
    const timer = setTimeout(() => child.kill("SIGKILL"), 150_000); // a loaded machine takes 40 s to load the relayer
    child.stdout.on("data", (d) => {
      stdout += d;
      if (until?.test(stdout) && !stopping) (stopping = true), child.kill("SIGTERM"); // once: a second SIGTERM would kill it mid-stop
    });
    child.stderr.on("data", (d) => (stderr += d));
    child.on("error", reject);
    child.on("exit", (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

const PAYER = "0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d";
const RELAYER_BASE = { VESTA_RPC_URL: "http://127.0.0.1:9", VESTA_ACCOUNT_CONFIG_ADDRESS: "0x5FbDB2315678afecb367f032d93F642f64180aa3", VESTA_PAYER_KEYS: PAYER };

describe("fail-closed production configuration (VESTA_MODE), checked by the started process", function () {
  this.timeout(360_000);

  it("the relayer in production names every problem in one message and exits 1: local keys, local billing, free credit, development evidence, replicas without a database", async function () {
    const r = await serve(["relayer"], {
      ...RELAYER_BASE,
      VESTA_MODE: "production",
      VESTA_KEY_PROVIDER: "local",
      VESTA_BILLING: "local",
      VESTA_FREE_CREDIT_CENTS: "500",
      VESTA_ATTESTATION_SOURCE: "development",
      VESTA_GAS_TOKEN_PRICE_CENTS: "300000",
      VESTA_SANDBOX_NETWORK: "shared",
      VESTA_REPLICAS: "3",
    });
    expect(r.code).to.equal(1);
    const lines = r.stderr.trim().split("\n");
    expect(lines[0]).to.equal("Vesta relayer failed to start: bad relayer environment (VESTA_MODE=production):");
    expect(lines.slice(1).map((l) => l.replace(/^\s*- /, "").split(":")[0])).to.deep.equal([
      "VESTA_KEY_PROVIDER=local",
      "VESTA_ATTESTATION_SOURCE=development",
      "VESTA_BILLING=local",
      "VESTA_FREE_CREDIT_CENTS",
      "DATABASE_URL",
    ]);
    expect(r.stderr).to.contain("DATABASE_URL: required with VESTA_REPLICAS=3 (replicas share their state through PostgreSQL");
    expect(r.stdout).to.equal(""); // it never started
  });

  it("the relayer in production with Stripe billing but no Stripe key refuses, naming the key; replicas with DATABASE_URL are accepted (the billing ledger is on it too)", async function () {
    const r = await serve(["relayer"], { ...RELAYER_BASE, VESTA_MODE: "production", VESTA_DSTACK_ENDPOINT: "/nonexistent/dstack.sock", VESTA_GAS_TOKEN_PRICE_CENTS: "1", VESTA_SANDBOX_NETWORK: "shared", VESTA_REPLICAS: "2", DATABASE_URL: "postgres://u:p@127.0.0.1:9/x" });
    expect(r.code).to.equal(1);
    const problems = r.stderr.trim().split("\n").slice(1).map((l) => l.replace(/^\s*- /, "").split(":")[0]);
    expect(problems).to.deep.equal(["STRIPE_SECRET_KEY", "STRIPE_PUBLISHABLE_KEY"]);
    expect(r.stderr).not.to.contain("VESTA_REPLICAS");
  });

  it("the triggers service reads VESTA_MODE too: production wants its public https URL, and replicas a database and a shared secret key, all in one message", async function () {
    const r = await serve(["triggers"], { TRIGGERS_CORE_URL: "http://127.0.0.1:8000", VESTA_REPLICAS: "2", TRIGGERS_PUBLIC_URL: "http://triggers.example.com" });
    expect(r.code).to.equal(1);
    const lines = r.stderr.trim().split("\n");
    expect(lines[0]).to.equal("Vesta triggers failed to start: bad triggers environment (VESTA_MODE=production, the default):");
    expect(lines.slice(1).map((l) => l.replace(/^\s*- /, "").split(":")[0])).to.deep.equal(["DATABASE_URL", "TRIGGERS_SECRET_KEY", "TRIGGERS_PUBLIC_URL", "TRIGGERS_SMTP_URL"]);
    const bad = await serve(["triggers"], { TRIGGERS_CORE_URL: "http://127.0.0.1:8000", VESTA_MODE: "staging", VESTA_REPLICAS: "0" });
    expect(bad.code).to.equal(1);
    expect(bad.stderr).to.contain("VESTA_MODE: VESTA_MODE must be development or production").and.to.contain("VESTA_REPLICAS:");
  });

  it("the image's entry point starts the triggers service from this install, and it stops on SIGTERM with exit 0", async function () {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "vesta-serve-"));
    const r = await serve(
      ["triggers"],
      { VESTA_MODE: "development", TRIGGERS_PORT: "0", TRIGGERS_DATA_DIR: dataDir, TRIGGERS_CORE_URL: "http://127.0.0.1:8000", TRIGGERS_LOG_LEVEL: "silent" },
      /Vesta triggers service at http:\/\/127\.0\.0\.1:\d+/,
    );
    fs.rmSync(dataDir, { recursive: true, force: true });
    expect(r.stdout).to.match(/Vesta triggers service at http:\/\/127\.0\.0\.1:\d+/);
    expect({ code: r.code, signal: r.signal }).to.deep.equal({ code: 0, signal: null });
  });

  it("the entry point refuses an unknown service and a missing build, naming the missing files", async function () {
    const r = await serve(["worker"], {});
    expect({ code: r.code, stderr: r.stderr.trim() }).to.deep.equal({ code: 2, stderr: 'Vesta: usage: serve.ts relayer|triggers (got "worker")' });
    const empty = fs.mkdtempSync(path.join(os.tmpdir(), "vesta-nobuild-"));
    expect(serveProblem("relayer", empty)).to.equal(`the relayer needs the output of "npm run build", missing: ${BUILT_FILES.relayer.join(", ")}`);
    expect(serveProblem("relayer", ROOT)).to.equal(undefined);
    fs.rmSync(empty, { recursive: true });
  });

  it("the healthcheck asks the /live (liveness, not the chain-dependent /health or /ready) of the service process 1 runs", function () {
    const cmd = (service: string) => ["node", "--require", "ts-node/register/transpile-only", "scripts/serve.ts", service].join("\0") + "\0";
    expect(healthUrl({}, cmd("relayer"))).to.equal("http://127.0.0.1:8000/live");
    expect(healthUrl({ VESTA_PORT: "9000", TRIGGERS_PORT: "9100" }, cmd("triggers"))).to.equal("http://127.0.0.1:9100/live");
    expect(healthUrl({ VESTA_HEALTH_URL: "http://127.0.0.1:1/x" }, cmd("triggers"))).to.equal("http://127.0.0.1:1/x");
  });
});

describe("the image's production install (npm ci --omit=dev) holds what the services load", function () {
  this.timeout(120_000);

  it("every package the relayer and the triggers service require is a production dependency (ts-node runs them)", async function () {
    const { stdout } = await new Promise<{ stdout: string }>((resolve, reject) => {
      const child = spawn(process.execPath, ["--require", "ts-node/register/transpile-only", "scripts/lib/runtimeDeps.ts", "relayer/server.ts", "relayer/config.ts", "triggers/server.ts", "triggers/config.ts", "scripts/serve.ts"], { cwd: ROOT, stdio: ["ignore", "pipe", "inherit"] });
      let out = "";
      child.stdout.on("data", (d) => (out += d));
      child.on("error", reject);
      child.on("exit", (code) => (code === 0 ? resolve({ stdout: out }) : reject(new Error(`exit ${code}`))));
    });
    const required = JSON.parse(stdout) as Record<string, string>;
    const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, "package.json"), "utf8")) as { dependencies: Record<string, string> };
    const outside = Object.entries(required).filter(([name]) => !(name in pkg.dependencies));
    expect(outside).to.deep.equal([]);
    expect(Object.keys(required)).to.include.members(["ethers", "express", "zod"]); // the probe sees the graph
    for (const runtime of ["ts-node", "typescript", "@sigstore/verify"]) expect(pkg.dependencies, runtime).to.have.property(runtime);
  });
});
