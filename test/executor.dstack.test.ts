import { expect } from "chai";
import crypto from "node:crypto";
import fs from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { verifyMessage } from "ethers";
import pino from "pino";
import { createKeyProvider, deriveWallet, paths } from "../executor/keys/provider";
import { DstackKeyProvider } from "../executor/keys/dstack";
import { call, newAccount, startStack, type Stack } from "./helpers/relayer";

/**
 * A stand-in for the TEE's dstack guest agent on a unix socket: answers GetKey like the real one
 * (hex key material bound to path and purpose), and records what it was asked.
 */
async function fakeGuestAgent() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "vesta-dstack-"));
  const socket = path.join(dir, "dstack.sock");
  const root = crypto.randomBytes(32);
  const asked: { path: string; purpose: string }[] = [];
  const server = http.createServer((req, res) => {
    let body = "";
    req.on("data", (c) => (body += c));
    req.on("end", () => {
      if (req.url !== "/GetKey") {
        res.writeHead(404).end("{}");
        return;
      }
      const { path: p, purpose } = JSON.parse(body);
      asked.push({ path: p, purpose });
      const key = crypto.createHmac("sha256", root).update(`${p}|${purpose}`).digest("hex");
      const out = JSON.stringify({ key, signature_chain: [] });
      // the SDK's unix-socket client reads Content-Length (it does not decode chunked bodies)
      res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(out) }).end(out);
    });
  });
  await new Promise<void>((resolve) => server.listen(socket, resolve));
  const expected = (p: string, purpose: string) => new Uint8Array(crypto.createHmac("sha256", root).update(`${p}|${purpose}`).digest());
  return {
    socket,
    asked,
    expected,
    close: async () => {
      await new Promise((resolve) => server.close(resolve));
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

describe("dstack key provider", function () {
  let agent: Awaited<ReturnType<typeof fakeGuestAgent>>;
  before(async () => {
    agent = await fakeGuestAgent();
  });
  after(async () => agent?.close());

  it("derives key material through the guest agent's GetKey, namespaced and deterministic", async function () {
    const keys = new DstackKeyProvider(agent.socket);
    const a = await keys.deriveSecret("pkp/0x01/0x02");
    expect(a).to.deep.equal(agent.expected("vesta/pkp/0x01/0x02", "vesta-key-v1"));
    expect(await keys.deriveSecret("pkp/0x01/0x02")).to.deep.equal(a);
    expect(await keys.deriveSecret("pkp/0x01/0x03")).to.not.deep.equal(a);
    expect(agent.asked.at(-1)).to.deep.equal({ path: "vesta/pkp/0x01/0x03", purpose: "vesta-key-v1" });
  });

  it("is chosen by configuration", async function () {
    const keys = createKeyProvider({ kind: "dstack", localRootSecretFile: "/nonexistent", dstackEndpoint: agent.socket }, pino({ level: "silent" }));
    expect(keys.kind).to.equal("dstack");
    const w = await deriveWallet(keys, paths.action("QmX"));
    expect(w.address).to.match(/^0x[0-9a-fA-F]{40}$/);
  });

  it("fails clearly when the agent is not there", async function () {
    expect(() => new DstackKeyProvider(path.join(os.tmpdir(), "no-such-dstack.sock"))).to.throw(/does not exist/);
  });

  describe("the relayer and executor on the dstack provider", function () {
    let stack: Stack;
    before(async () => {
      stack = await startStack({ env: { VESTA_KEY_PROVIDER: "dstack", VESTA_DSTACK_ENDPOINT: agent.socket } });
    });
    after(async () => stack?.stop());

    it("creates accounts and wallets and signs inside actions with keys from the agent only", async function () {
      const before = agent.asked.length;
      const { apiKey } = await newAccount(stack);
      const wallet = (await call(stack, "GET", "/create_wallet", { key: apiKey })).body.wallet_address;
      const code = `async function main(p) { return new ethers.Wallet(await Lit.Actions.getPrivateKey({ pkpId: p.w })).signMessage("from the TEE"); }`;
      const r = await call(stack, "POST", "/lit_action", { key: apiKey, body: { code, js_params: { w: wallet } } });
      expect(r.body.has_error, JSON.stringify(r.body)).to.equal(false);
      expect(verifyMessage("from the TEE", r.body.response)).to.equal(wallet);
      const paths_ = agent.asked.slice(before).map((a) => a.path.split("/")[1]);
      expect(paths_).to.include.members(["account-admin", "pkp"]);
      // nothing was derived from a local root secret
      expect(fs.existsSync(path.join(stack.relayerConfig.dataDir, "root-secret"))).to.equal(false);
    });
  });
});
