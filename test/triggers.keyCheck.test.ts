import http from "node:http";
import type { AddressInfo } from "node:net";
import { expect } from "chai";
import { checkTriggerKey, requirePermittedKey } from "../triggers/keyCheck";
import type { TriggersCtx } from "../triggers/context";
import { AppError } from "../protocol/errors";

/**
 * The triggers service's question to the core (triggers/keyCheck.ts), answer by answer, against a
 * stand-in core: what it sends, each verdict, and which answers are transient (503, nothing saved)
 * rather than refusals. triggers.keys.test.ts shows the refusals through the real core.
 */
describe("the triggers service's key check against the core, answer by answer", function () {
  let server: http.Server;
  let url: string;
  let answer: (req: http.IncomingMessage, body: string, res: http.ServerResponse) => void;
  const seen: { path?: string; key?: string; body?: string }[] = [];
  const json = (res: http.ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { "content-type": "application/json" });
    res.end(JSON.stringify(body));
  };

  before(async () => {
    server = http.createServer((req, res) => {
      let body = "";
      req.on("data", (c) => (body += c));
      req.on("end", () => {
        seen.push({ path: req.url, key: req.headers["x-api-key"] as string | undefined, body });
        answer(req, body, res);
      });
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => {
    server.closeAllConnections();
    return new Promise((r) => server.close(r));
  });
  beforeEach(() => (seen.length = 0));

  const ctx = (over: { coreUrl?: string; coreTimeoutMs?: number; signal?: AbortSignal } = {}) =>
    ({ config: { coreUrl: over.coreUrl ?? url, coreTimeoutMs: over.coreTimeoutMs ?? 30_000 }, signal: over.signal ?? new AbortController().signal }) as unknown as TriggersCtx;

  it("asks check_execute_permission with the usage key and the code; a usage key that may execute is ok, with the CID", async function () {
    answer = (_req, _body, res) => json(res, 200, { key_kind: "usage", can_execute: true, ipfs_id: "QmCid" });
    expect(await checkTriggerKey(ctx(), "uk_1", "async function main() {}")).to.deep.equal({ ok: true, cid: "QmCid" });
    expect(seen).to.deep.equal([{ path: "/core/v1/check_execute_permission", key: "uk_1", body: JSON.stringify({ code: "async function main() {}" }) }]);
    await requirePermittedKey(ctx(), "uk_1", "x"); // does not throw
  });

  /** The AppError a verdict refuses with (and that requirePermittedKey throws). */
  async function refusal(code: string) {
    const v = await checkTriggerKey(ctx(), "uk", code);
    expect(v).to.have.property("ok", false);
    const e = (v as { error: AppError }).error;
    let thrown: unknown;
    await requirePermittedKey(ctx(), "uk", code).catch((err) => (thrown = err));
    expect(thrown).to.be.instanceOf(AppError);
    expect([(thrown as AppError).status, (thrown as AppError).code, (thrown as AppError).message]).to.deep.equal([e.status, e.code, e.message]);
    return [e.status, e.code, e.message];
  }

  it("refuses an account key, a usage key that may not execute the action, and a key the core does not know", async function () {
    answer = (_req, _body, res) => json(res, 200, { key_kind: "account", can_execute: true, ipfs_id: "QmCid" });
    expect(await refusal("c")).to.deep.equal([
      400,
      "account_key_not_allowed",
      "usage_api_key is an account key: a trigger runs with a scoped usage key permitted to execute its action (mint one in the dashboard or with /core/v1/add_usage_api_key)",
    ]);
    answer = (_req, _body, res) => json(res, 200, { key_kind: "usage", can_execute: false, ipfs_id: "QmOther" });
    expect(await refusal("c")).to.deep.equal([403, "usage_key_not_permitted", "this usage key may not execute action QmOther: no group on which it has execute lists it"]);
    answer = (_req, _body, res) => json(res, 401, { error: "this API key is unknown, revoked or expired", code: "invalid_api_key" });
    expect(await refusal("c")).to.deep.equal([400, "invalid_usage_key", "usage_api_key is not a key of the core service (unknown, revoked or expired)"]);
  });

  it("another 4xx is the action's refusal, quoting the core (code and message, cut to 2000 characters)", async function () {
    answer = (_req, _body, res) => json(res, 400, { error: "code: must be well-formed", code: "invalid_code" });
    expect(await refusal("c")).to.deep.equal([400, "invalid_action", "the core service refused to check this action: 400 invalid_code: code: must be well-formed"]);
    answer = (_req, _body, res) => json(res, 413, { message: "too big" });
    expect(await refusal("c")).to.deep.equal([400, "invalid_action", "the core service refused to check this action: 413 error: too big"]);
    answer = (_req, _body, res) => json(res, 404, {});
    expect(await refusal("c")).to.deep.equal([400, "invalid_action", "the core service refused to check this action: 404 error: "]);
    answer = (_req, _body, res) => json(res, 400, { error: "x".repeat(5000), code: "invalid_request" });
    const [, , message] = await refusal("c");
    expect((message as string).length).to.equal("the core service refused to check this action: ".length + 2000);
  });

  it("an answer with no body at all (Content-Length: 0) is quoted as such, not a crash", async function () {
    answer = (_req, _body, res) => {
      res.writeHead(404, { "content-length": "0" });
      res.end();
    };
    expect(await refusal("c")).to.deep.equal([400, "invalid_action", "the core service refused to check this action: 404 error: "]);
    answer = (_req, _body, res) => {
      res.writeHead(502, { "content-length": "0" });
      res.end();
    };
    expect(await checkTriggerKey(ctx(), "uk", "c")).to.deep.equal({ transient: "the core service could not check the usage key now (502 error: )" });
  });

  it("a 5xx, a 429, an unreachable core or one slower than the timeout is transient: 503 core_unavailable, nothing saved", async function () {
    const transient = async (c: TriggersCtx) => {
      const v = await checkTriggerKey(c, "uk", "c");
      expect(v).to.have.property("transient").that.is.a("string");
      let thrown: unknown;
      await requirePermittedKey(c, "uk", "c").catch((err) => (thrown = err));
      expect([(thrown as AppError).status, (thrown as AppError).code]).to.deep.equal([503, "core_unavailable"]);
      expect((thrown as AppError).message).to.equal(`${(v as { transient: string }).transient}; nothing was saved, try again`);
      return (v as { transient: string }).transient;
    };
    answer = (_req, _body, res) => json(res, 503, { error: "the chain does not answer", code: "chain_unavailable" });
    expect(await transient(ctx())).to.equal("the core service could not check the usage key now (503 chain_unavailable: the chain does not answer)");
    answer = (_req, _body, res) => json(res, 500, { message: "boom" });
    expect(await transient(ctx())).to.equal("the core service could not check the usage key now (500 error: boom)");
    answer = (_req, _body, res) => json(res, 429, { error: "slow down", code: "rate_limited" });
    expect(await transient(ctx())).to.equal("the core service could not check the usage key now (429 rate_limited: slow down)");
    const closed = http.createServer();
    await new Promise<void>((r) => closed.listen(0, "127.0.0.1", r));
    const deadUrl = `http://127.0.0.1:${(closed.address() as AddressInfo).port}`;
    await new Promise((r) => closed.close(r));
    expect(await transient(ctx({ coreUrl: deadUrl }))).to.match(/^the core service could not be reached to check the usage key: /);
    answer = () => undefined; // never answers
    const started = Date.now();
    expect(await transient(ctx({ coreTimeoutMs: 200 }))).to.match(/^the core service could not be reached to check the usage key: /);
    expect(Date.now() - started, "bounded by the core timeout").to.be.below(10_000);
    const stopping = new AbortController();
    setTimeout(() => stopping.abort(), 100);
    expect(await transient(ctx({ signal: stopping.signal }))).to.match(/^the core service could not be reached/);
  });
});
