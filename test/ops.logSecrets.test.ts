import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import crypto from "node:crypto";
import { expect } from "chai";
import { keccak256, toUtf8Bytes } from "ethers";
import { startStack, type Stack } from "./helpers/relayer";
import { spawnRelayer, spawnService, type ServiceProcess } from "./helpers/serviceProcess";
import { freePorts } from "./helpers/startProcess";
import { approvedTokenAt, http, until } from "./helpers/triggers";
import { computeCid } from "../executor/cid";

const SIGN = `async function main(params) {
  const pk = await Lit.Actions.getPrivateKey({ pkpId: params.pkpId });
  const wallet = new ethers.Wallet(pk);
  console.log("signing for", params.note);
  return { signature: await wallet.signMessage(params.secret), seen: params.event ? "event" : "direct" };
}`;

/** Every JSON log line of a process's output (a line that is not JSON fails the test: logs are structured). */
const jsonLines = (out: string) =>
  out
    .split("\n")
    .filter((l) => l.startsWith("{"))
    .map((l) => JSON.parse(l));

describe("logs: a full workflow in processes leaves none of its secrets in any log line", function () {
  this.timeout(240_000);
  let stack: Stack;
  let relayer: ServiceProcess | undefined;
  let triggers: ServiceProcess | undefined;

  before(async () => {
    stack = await startStack({ payerCount: 2 });
  });
  after(async () => {
    relayer?.child.kill("SIGKILL");
    triggers?.child.kill("SIGKILL");
    for (const p of [relayer, triggers]) if (p) fs.rmSync(p.dataDir, { recursive: true, force: true });
    await stack?.stop();
  });

  it("account, usage key, wallet, a run with a secret param and a signature, a trigger fired by webhook: the logs (debug level) hold no key, token, signature or param", async function () {
    relayer = await spawnRelayer(stack, { VESTA_LOG_LEVEL: "debug" });
    const api = `${relayer.url}/core/v1`;
    const post = (p: string, key: string | undefined, body: unknown) => http(`${api}${p}`, { method: "POST", body, headers: key ? { "x-api-key": key } : {} });
    const account = await post("/new_account", undefined, { account_name: "secrets" });
    expect(account.status).to.equal(200);
    const apiKey: string = account.body.api_key;
    const wallet = (await http(`${api}/create_wallet`, { headers: { "x-api-key": apiKey } })).body.wallet_address as string;
    const cid = await computeCid(SIGN);
    expect((await post("/add_group", apiKey, { group_name: "signers", pkp_ids_permitted: [wallet], cid_hashes_permitted: [keccak256(toUtf8Bytes(cid))] })).status).to.equal(200);
    const usageKey: string = (await post("/add_usage_api_key", apiKey, { name: "runner", execute_in_groups: [1] })).body.usage_api_key;
    const secretParam = `param-${crypto.randomBytes(16).toString("hex")}`;
    const run = await post("/lit_action", usageKey, { code: SIGN, js_params: { pkpId: wallet, secret: secretParam, note: "a note" } });
    expect(run.status, JSON.stringify(run.body)).to.equal(200);
    const signature: string = run.body.response.signature;
    expect(signature).to.match(/^0x[0-9a-f]{130}$/);

    const [port] = await freePorts(1);
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "vesta-triggers-proc-"));
    triggers = await spawnService(
      "triggers/main.ts",
      { VESTA_MODE: "development", TRIGGERS_CORE_URL: relayer.url, TRIGGERS_PORT: String(port), TRIGGERS_DATA_DIR: dataDir, TRIGGERS_LOG_LEVEL: "debug", TRIGGERS_QUEUE_POLL_MS: "50" },
      "triggers service listening",
      port,
      dataDir,
    );
    const t = triggers;
    // Local mode has no mail server: the sign-in link is delivered in the log (one line, its purpose); it is checked below.
    const linkLines = () => jsonLines(t.out()).filter((l) => typeof l.link === "string");
    const bearer = await approvedTokenAt(t.url, "ops@example.com", () => until(async () => linkLines()[0]?.link, 20_000, "the sign-in link"));
    const trigger = await http(`${t.url}/api/triggers`, { method: "POST", token: bearer, body: { name: "hook", kind: "webhook", action_code: SIGN, usage_api_key: usageKey, config: {}, default_params: { pkpId: wallet, secret: secretParam, note: "from a webhook" } } });
    expect(trigger.status, JSON.stringify(trigger.body)).to.equal(201);
    const eventSecret = `event-${crypto.randomBytes(16).toString("hex")}`;
    const fired = await http(`${t.url}/webhook/${trigger.body.id}`, { method: "POST", body: { secret_in_event: eventSecret } });
    expect(fired.status).to.equal(202);
    const done = await until(async () => {
      const r = await http(`${t.url}/api/runs/${fired.body.run_id}`, { token: bearer });
      return r.body.status === "success" || r.body.status === "failed" ? r.body : undefined;
    }, 60_000, "the webhook's run");
    expect(done.status, JSON.stringify(done)).to.equal("success");
    const webhookSignature: string = done.response.response.signature;

    relayer.child.kill("SIGTERM");
    t.child.kill("SIGTERM");
    expect([await relayer.exited, await t.exited]).to.deep.equal([0, 0]);

    const secrets: Record<string, string> = {
      "account API key": apiKey,
      "usage key": usageKey,
      "secret js_param": secretParam,
      "signature of the run": signature,
      "signature of the webhook's run": webhookSignature,
      "triggers bearer token": bearer,
      "webhook id (its capability)": trigger.body.id,
      "webhook event": eventSecret,
      ...Object.fromEntries(stack.relayerConfig.payerKeys.map((k, i) => [`payer key ${i}`, k.slice(2)])),
      "local root secret": fs.readFileSync(path.join(relayer.dataDir, "root-secret")).toString("hex"),
    };
    const link = new URL(linkLines()[0].link);
    const linkToken = link.searchParams.get("token")!;
    for (const [name, proc] of [["relayer", relayer], ["triggers", t]] as const) {
      const out = proc.out();
      const lines = jsonLines(out);
      expect(lines.length, `${name} logged`).to.be.above(5);
      for (const [what, secret] of Object.entries(secrets)) expect(out.includes(secret), `${name}'s log holds the ${what}`).to.equal(false);
      // The link's token appears only in the development mailer's own line.
      const withToken = out.split("\n").filter((l) => l.includes(linkToken));
      expect(withToken.every((l) => l.includes('"link"')), `${name}: the sign-in token outside its mail line`).to.equal(true);
      // Every line of a request carries its id (the request line and what was logged while serving it).
      for (const l of lines.filter((l) => l.msg === "request")) expect(l.request_id, JSON.stringify(l)).to.match(/^[0-9a-f-]{36}$/);
    }
    // The development mailer's line is logged for the request that asked for the link: it carries its id.
    expect(linkLines()[0].request_id, "the sign-in link's line").to.match(/^[0-9a-f-]{36}$/);
    const relayerLines = jsonLines(relayer.out());
    const created = relayerLines.find((l) => l.msg === "account created");
    expect(created?.request_id, "a line logged by a route while serving the request carries its id").to.match(/^[0-9a-f-]{36}$/);
  });
});
