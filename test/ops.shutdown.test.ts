import fs from "node:fs";
import path from "node:path";
import http from "node:http";
import { expect } from "chai";
import Database from "better-sqlite3";
import { startStack, type Stack } from "./helpers/relayer";
import { spawnRelayer } from "./helpers/serviceProcess";
import { INTERRUPTED_MESSAGE } from "../protocol/ops/drain";

const SLOW = (ms: number) => `async function main() { await new Promise((r) => setTimeout(r, ${ms})); return "finished"; }`;

/** One request on `agent` (a kept-alive connection), answered as {status, body}. */
function request(agent: http.Agent, url: string, method: string, body?: unknown, headers: Record<string, string> = {}): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method, agent, headers: { "content-type": "application/json", ...headers } }, (res) => {
      let data = "";
      res.on("data", (c) => (data += c));
      res.on("end", () => resolve({ status: res.statusCode!, body: data ? JSON.parse(data) : undefined }));
    });
    req.on("error", reject);
    req.end(body === undefined ? undefined : JSON.stringify(body));
  });
}

const runDebits = (dataDir: string) => {
  const db = new Database(path.join(dataDir, "billing.sqlite"), { readonly: true });
  try {
    return db.prepare("SELECT cents, kind FROM debits WHERE kind = 'run'").all() as { cents: number; kind: string }[];
  } finally {
    db.close();
  }
};

describe("graceful shutdown of the relayer process on SIGTERM", function () {
  this.timeout(240_000);
  let stack: Stack;
  before(async () => {
    stack = await startStack({ payerCount: 2 });
  });
  after(async () => stack?.stop());

  it("finishes the run under way within VESTA_SHUTDOWN_DEADLINE_MS, refuses new connections and requests (503 shutting_down), records its charge, exits 0", async function () {
    const p = await spawnRelayer(stack, { VESTA_SHUTDOWN_DEADLINE_MS: "15000" });
    try {
      const api = `${p.url}/core/v1`;
      const busy = new http.Agent({ keepAlive: true, maxSockets: 1 });
      const idle = new http.Agent({ keepAlive: true, maxSockets: 1 });
      const account = await request(busy, `${api}/new_account`, "POST", { account_name: "shutdown" });
      expect(account.status).to.equal(200);
      expect((await request(idle, `${p.url}/health`, "GET")).status).to.equal(200); // a connection kept open
      const run = request(busy, `${api}/lit_action`, "POST", { code: SLOW(3000) }, { "x-api-key": account.body.api_key });
      await new Promise((r) => setTimeout(r, 1000)); // the run is in its sandbox
      p.child.kill("SIGTERM");
      await new Promise((r) => setTimeout(r, 300));
      const fresh = await fetch(`${p.url}/health`).then(
        (r) => `answered ${r.status}`,
        (err) => (err as { cause?: { code?: string } }).cause?.code,
      );
      expect(fresh, "the listening socket is closed").to.equal("ECONNREFUSED");
      const late = await request(idle, `${api}/list_groups`, "GET", undefined, { "x-api-key": account.body.api_key }).catch((err) => ({ status: 0, body: { code: err.code } }));
      // A request on a connection kept from before: refused with a clear error (or the idle connection was closed first).
      if (late.status === 0) expect(late.body.code).to.be.oneOf(["ECONNRESET", "ECONNREFUSED"]);
      else expect([late.status, late.body.code]).to.deep.equal([503, "shutting_down"]);
      const answered = await run;
      expect([answered.status, answered.body.response]).to.deep.equal([200, "finished"]);
      expect(await p.exited, p.out()).to.equal(0);
      const debits = runDebits(p.dataDir);
      expect(debits, "the run's charge is in the ledger").to.have.length(1);
      expect(debits[0].cents, "at least 3 started seconds at 1 cent").to.be.within(3, 5);
      expect(p.out()).to.include("everything under way finished");
    } finally {
      p.child.kill("SIGKILL");
      fs.rmSync(p.dataDir, { recursive: true, force: true });
    }
  });

  it("past the deadline, answers the run still under way 503 interrupted (its work may have been done in part: never the \"nothing was done, retry\" of shutting_down), charges the time it ran, and exits 0", async function () {
    const p = await spawnRelayer(stack, { VESTA_SHUTDOWN_DEADLINE_MS: "1500" });
    try {
      const api = `${p.url}/core/v1`;
      const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
      const account = await request(agent, `${api}/new_account`, "POST", { account_name: "shutdown" });
      expect(account.status).to.equal(200);
      const started = Date.now();
      const run = request(agent, `${api}/lit_action`, "POST", { code: SLOW(60_000) }, { "x-api-key": account.body.api_key });
      await new Promise((r) => setTimeout(r, 1000));
      p.child.kill("SIGTERM");
      const answered = await run;
      // It ran for a second and is charged for it: a client told "nothing was done, retry" would run it (and its effects) twice.
      expect([answered.status, answered.body.code, answered.body.message]).to.deep.equal([503, "interrupted", INTERRUPTED_MESSAGE]);
      expect(Date.now() - started, "answered at the deadline, not when the action would have ended").to.be.below(15_000);
      expect(await p.exited, p.out()).to.equal(0);
      const debits = runDebits(p.dataDir);
      expect(debits, "the run is charged for the seconds it held its sandbox").to.have.length(1);
      expect(debits[0].cents).to.be.within(2, 5);
    } finally {
      p.child.kill("SIGKILL");
      fs.rmSync(p.dataDir, { recursive: true, force: true });
    }
  });
});
