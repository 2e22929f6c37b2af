/**
 * `npm run check:image-install`: the image's runtime stage without Docker. In a temporary
 * directory: `npm ci --omit=dev` (the npm cache preferred: --prefer-offline), the files the
 * Dockerfile copies (from this checkout, which must be built: npm run build), then the image's entry
 * point starts each service from there: the relayer against a local chain (`npm start` of this
 * checkout provides the chain and the contracts), answering GET /health, and the triggers service
 * against that relayer, answering GET /SKILL.md. Both are stopped with SIGTERM and must exit 0.
 * Exits 1 with the reason otherwise. Takes minutes (the install alone: 3 min on 2 idle cores, 13 on
 * busy ones), which is why the test suite checks the entry point on the existing install instead
 * (test/deploy.config.test.ts). VESTA_CHECK_INSTALL_DIR=<dir> installs there and keeps it, and reuses
 * an install already there (the built files are copied again).
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { waitForOutput } from "./lib/waitForOutput";

const ROOT = path.join(__dirname, "..");
/** What the Dockerfile's runtime stage copies besides node_modules (keep in step with it). */
const IMAGE_FILES = ["package.json", "package-lock.json", "tsconfig.json", "typechain-types", "dist/sandbox", "dist/dashboard", "client", "protocol", "relayer", "executor", "billing", "storage", "attestation", "triggers", "scripts/serve.ts", "scripts/healthcheck.js"];
/** Hardhat's default account 19: a payer key that npm start's own relayer does not use. */
const PAYER_KEY = "0xdf57089febbacf7ba0bc227dafbffa9fc08a93fdc68e1e42411a14efcf23656e";

const log = (line: string) => console.log(`check:image-install: ${line}`);

/** Waits for `marker` in the output of a child, naming it when that fails. */
const waitFor = (child: ChildProcess, marker: RegExp, what: string, timeoutMs: number) =>
  waitForOutput(child, marker, timeoutMs).catch((err: Error) => {
    throw new Error(`${what}: ${err.message}`);
  });

function stop(child: ChildProcess, what: string): Promise<void> {
  return new Promise((resolve, reject) => {
    if (child.exitCode !== null) return reject(new Error(`${what} had already exited with ${child.exitCode}`));
    const timer = setTimeout(() => child.kill("SIGKILL"), 30_000);
    child.once("exit", (code, signal) => {
      clearTimeout(timer);
      if (code === 0) resolve();
      else reject(new Error(`${what} stopped with code ${code}, signal ${signal} (expected exit 0 on SIGTERM)`));
    });
    child.kill("SIGTERM");
  });
}

async function expectOk(url: string) {
  const res = await fetch(url);
  if (res.status !== 200) throw new Error(`GET ${url}: ${res.status}`);
  log(`GET ${url}: 200`);
}

async function main() {
  for (const f of ["dist/sandbox/sandbox-process.js", "dist/dashboard/index.html", "typechain-types/index.ts"]) {
    if (!fs.existsSync(path.join(ROOT, f))) throw new Error(`${f} is missing: run npm run build first`);
  }
  const keep = process.env.VESTA_CHECK_INSTALL_DIR;
  const dir = keep ? path.resolve(keep) : fs.mkdtempSync(path.join(os.tmpdir(), "vesta-image-"));
  fs.mkdirSync(dir, { recursive: true });
  const children: ChildProcess[] = [];
  const stopAll = () => {
    for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill("SIGTERM");
  };
  process.once("SIGTERM", () => (stopAll(), process.exit(1)));
  process.once("SIGINT", () => (stopAll(), process.exit(1)));
  try {
    const installed = fs.existsSync(path.join(dir, "node_modules")) && fs.existsSync(path.join(dir, "package-lock.json")) && fs.readFileSync(path.join(dir, "package-lock.json"), "utf8") === fs.readFileSync(path.join(ROOT, "package-lock.json"), "utf8");
    if (installed) log(`reusing the production install in ${dir}`);
    else {
      for (const f of ["package.json", "package-lock.json"]) fs.copyFileSync(path.join(ROOT, f), path.join(dir, f));
      log(`npm ci --omit=dev in ${dir}`);
      const started = Date.now();
      const ci = spawnSync("npm", ["ci", "--omit=dev", "--prefer-offline", "--no-audit", "--no-fund"], { cwd: dir, stdio: ["ignore", "ignore", "inherit"] });
      if (ci.status !== 0) throw new Error(`npm ci --omit=dev failed (exit ${ci.status})`);
      log(`installed in ${Math.round((Date.now() - started) / 1000)} s`);
    }
    for (const d of ["chain", "relayer-data", "triggers-data"]) fs.rmSync(path.join(dir, d), { recursive: true, force: true });
    for (const f of IMAGE_FILES) fs.cpSync(path.join(ROOT, f), path.join(dir, f), { recursive: true });
    for (const dev of ["hardhat", "esbuild", "vite", "chai"]) {
      if (fs.existsSync(path.join(dir, "node_modules", dev))) throw new Error(`${dev} (a development dependency) is in the production install`);
    }

    const base = 20_000 + Math.floor(Math.random() * 20_000);
    const dataDir = path.join(dir, "chain");
    const chain = spawn(process.execPath, ["--require", "ts-node/register/transpile-only", "scripts/start.ts"], {
      cwd: ROOT,
      env: { ...process.env, VESTA_DATA_DIR: dataDir, VESTA_CHAIN_PORT: String(base), VESTA_PORT: String(base + 1), TRIGGERS_PORT: String(base + 2), VESTA_PAYER_COUNT: "1" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    children.push(chain);
    await waitFor(chain, /Press Ctrl-C to stop\./, "npm start (the chain)", 240_000);
    log(`local chain and contracts at http://127.0.0.1:${base}`);

    const entry = (service: string, env: NodeJS.ProcessEnv) =>
      spawn(process.execPath, ["--require", "ts-node/register/transpile-only", "scripts/serve.ts", service], { cwd: dir, env: { PATH: process.env.PATH, HOME: dir, ...env }, stdio: ["ignore", "pipe", "pipe"] });
    const relayer = entry("relayer", {
      VESTA_MODE: "development",
      VESTA_DEPLOYMENT_FILE: path.join(dataDir, "deployment.json"),
      VESTA_PAYER_KEYS: PAYER_KEY,
      VESTA_PORT: String(base + 3),
      VESTA_DATA_DIR: path.join(dir, "relayer-data"),
      VESTA_LOCAL_ROOT_SECRET_FILE: path.join(dir, "relayer-data", "root-secret"),
      VESTA_LOG_LEVEL: "warn",
    });
    children.push(relayer);
    await waitFor(relayer, /Vesta relayer: http:\/\/127\.0\.0\.1:\d+\/core\/v1/, "the relayer (image install)", 120_000);
    await expectOk(`http://127.0.0.1:${base + 3}/health`);
    const triggers = entry("triggers", { VESTA_MODE: "development", TRIGGERS_PORT: String(base + 4), TRIGGERS_DATA_DIR: path.join(dir, "triggers-data"), TRIGGERS_CORE_URL: `http://127.0.0.1:${base + 3}`, TRIGGERS_LOG_LEVEL: "warn" });
    children.push(triggers);
    await waitFor(triggers, /Vesta triggers service at http:\/\/127\.0\.0\.1:\d+/, "the triggers service (image install)", 120_000);
    await expectOk(`http://127.0.0.1:${base + 4}/SKILL.md`);
    await stop(triggers, "the triggers service");
    await stop(relayer, "the relayer");
    log("both services started from the production install and stopped on SIGTERM with exit 0");
  } finally {
    stopAll();
    await new Promise((r) => setTimeout(r, 2000));
    if (!keep) fs.rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(`check:image-install failed: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
