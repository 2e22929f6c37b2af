import { expect } from "chai";
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { JsonRpcProvider } from "ethers";
import { readStartEnv } from "../scripts/lib/env";
import { waitForOutput } from "../scripts/lib/waitForOutput";

const waitFor = waitForOutput;

describe("npm start (scripts/start.ts)", function () {
  this.timeout(180_000);

  it("serves the chain, the contracts and the core API with a working first key, and stops cleanly", async function () {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "vesta-start-"));
    const port = 20_000 + Math.floor(Math.random() * 20_000);
    const apiPort = port + 1;
    // What `npm start` runs, without npm in between, so that the signal reaches the script itself.
    const child = spawn(process.execPath, ["--require", "ts-node/register/transpile-only", "scripts/start.ts"], {
      env: { ...process.env, VESTA_CHAIN_PORT: String(port), VESTA_DATA_DIR: dataDir, VESTA_PAYER_COUNT: "3", VESTA_PORT: String(apiPort) },
      stdio: ["ignore", "pipe", "pipe"],
    });
    try {
      const out = await waitFor(child, "Press Ctrl-C to stop.", 150_000);
      const deployment = JSON.parse(fs.readFileSync(path.join(dataDir, "deployment.json"), "utf8"));
      expect(out).to.contain(deployment.accountConfig).and.to.contain(deployment.appAuth).and.to.contain(`http://127.0.0.1:${port}`);
      expect(deployment.apiPayers).to.have.length(3);
      const provider = new JsonRpcProvider(`http://127.0.0.1:${port}`, undefined, { staticNetwork: true });
      expect(await provider.getCode(deployment.accountConfig)).to.match(/^0x[0-9a-f]{100,}$/);
      expect(await provider.getCode(deployment.appAuth)).to.match(/^0x[0-9a-f]{100,}$/);
      provider.destroy();

      const api = `http://127.0.0.1:${apiPort}/core/v1`;
      expect(out).to.contain(`core API           ${api}`);
      const cfg = await (await fetch(`${api}/get_node_chain_config`)).json();
      expect(cfg).to.include({ chain_id: 31337, contract_address: deployment.accountConfig });
      const key = out.match(/A first account key to try \(shown once\):\s+(\S+)/)?.[1];
      expect(key, "printed first key").to.match(/^[A-Za-z0-9+/]{43}=$/);
      const groups = await fetch(`${api}/list_groups`, { headers: { "x-api-key": key! } });
      expect(groups.status).to.equal(200);
      expect(await groups.json()).to.deep.equal([]);
      expect(await (await fetch(`${api}/account_exists`, { headers: { "x-api-key": key! } })).json()).to.equal(true);
      // billing in local mode: the first account has the default free credit, no Stripe needed
      expect(await (await fetch(`${api}/billing/balance`, { headers: { "x-api-key": key! } })).json()).to.deep.equal({ balance_cents: -1000, credit_cents: 1000, balance_display: "$10.00 credit" });
      expect(out).to.contain("billing            local mode");
      // The dashboard, built by npm start's build step, with the triggers service it approves clients of.
      const dashboardUrl = `http://127.0.0.1:${apiPort}/dashboard/`;
      expect(out).to.contain(`dashboard          ${dashboardUrl}`);
      const page = await fetch(dashboardUrl);
      expect(page.status).to.equal(200);
      expect(page.headers.get("content-security-policy")).to.contain("default-src 'self'");
      expect(await page.text()).to.match(/<script type="module" crossorigin src="\/dashboard\/assets\/index-[\w-]+\.js"><\/script>/);
      const triggersUrl = /triggers service\s+(http:\/\/\S+)/.exec(out)![1];
      expect(await (await fetch(`${dashboardUrl}config.json`)).json()).to.deep.equal({ triggers_url: triggersUrl, explorer_url: null, eip712_domain_name: "Vesta ChainSecured", billing: "local" });
      const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
      child.kill("SIGTERM");
      expect(await exited).to.equal(0);
    } finally {
      if (child.exitCode === null) child.kill("SIGKILL");
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

describe("readStartEnv", function () {
  it("applies the defaults", function () {
    expect(readStartEnv({})).to.deep.equal({ chainHost: "127.0.0.1", chainPort: 8545, chainAllowedOrigins: new Set(), payerCount: 4, dataDir: ".vesta" });
  });

  it("rejects bad values with one message naming each variable", function () {
    expect(() => readStartEnv({ VESTA_CHAIN_PORT: "99999", VESTA_PAYER_COUNT: "two" }))
      .to.throw(/VESTA_CHAIN_PORT="99999" must be an integer from 1 to 65535[\s\S]*VESTA_PAYER_COUNT="two"/);
  });
});
