import { expect } from "chai";
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

/** `npm start` runs the triggers service beside the relayer and prints its URL. */
describe("npm start with the triggers service", function () {
  this.timeout(180_000);
  it("prints the triggers URL, serves SKILL.md and the API there, and stops cleanly", async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "vesta-start-triggers-"));
    const port = 20_000 + Math.floor(Math.random() * 20_000);
    const child = spawn(process.execPath, ["--require", "ts-node/register/transpile-only", "scripts/start.ts"], {
      env: { ...process.env, VESTA_CHAIN_PORT: String(port), VESTA_PORT: String(port + 1), TRIGGERS_PORT: String(port + 2), VESTA_DATA_DIR: dataDir, VESTA_PAYER_COUNT: "2" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    child.stdout!.on("data", (c) => (out += c));
    child.stderr!.on("data", (c) => (out += c));
    try {
      const end = Date.now() + 150_000;
      while (!out.includes("Press Ctrl-C to stop.")) {
        if (child.exitCode !== null || Date.now() > end) throw new Error(`start did not come up:\n${out}`);
        await new Promise((r) => setTimeout(r, 100));
      }
      const url = `http://127.0.0.1:${port + 2}`;
      expect(out).to.contain(`triggers service   ${url}`);
      const skill = await fetch(`${url}/SKILL.md`);
      expect(skill.status).to.equal(200);
      expect(await skill.text()).to.contain(`${url}/authorize?challenge=`);
      expect((await fetch(`${url}/api/me`)).status).to.equal(401);
      const login = await fetch(`${url}/auth/login`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ email: "dev@example.com" }) });
      expect(login.status).to.equal(202);
      const end2 = Date.now() + 5_000;
      while (!out.includes("sign-in link for dev@example.com") && Date.now() < end2) await new Promise((r) => setTimeout(r, 50));
      expect(out).to.match(new RegExp(`sign-in link for dev@example.com: ${url}/auth/magic\\?token=`));
    } finally {
      const exited = new Promise((r) => child.once("exit", r));
      child.kill("SIGTERM");
      await exited;
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
    expect(out).to.contain("Vesta: stopping ...");
  });
});
