import { expect } from "chai";
import { execFile } from "node:child_process";
import { createHash, X509Certificate } from "node:crypto";
import fs from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import fixture from "../attestation/fixtures/dstack-tdx-quote-report.json";
import { composeHash } from "../attestation/compose";
import { DEV_NOTICE, devAppCompose, devComposeHash, developmentEvidence } from "../attestation/development";
import { listingLinks } from "../attestation/documents";
import { parseTdxQuote } from "../attestation/tdx";
import { verifyDeployment, type GovernancePins } from "../attestation/verify";
import { governedAppAuth, statuses } from "./helpers/attestation";
import { startStack, type Stack } from "./helpers/relayer";

const sha256 = (b: Buffer | string) => createHash("sha256").update(b).digest("hex");

async function get(stack: Stack, p: string, init?: RequestInit) {
  const res = await fetch(`${stack.relayer.url}${p}`, { redirect: "manual", ...init });
  return { status: res.status, type: res.headers.get("content-type") ?? "", location: res.headers.get("location"), body: Buffer.from(await res.arrayBuffer()) };
}
const getJson = async (stack: Stack, p: string) => JSON.parse((await get(stack, p)).body.toString());

/** Runs `npm run verify -- <args>` (the script itself, without npm): its exit code and output. */
const verifyCli = (...args: string[]) =>
  new Promise<{ code: number | null; out: string }>((resolve) => {
    execFile(process.execPath, ["--require", "ts-node/register/transpile-only", "scripts/verify.ts", ...args], (err, stdout, stderr) =>
      resolve({ code: err ? (err.code as number) : 0, out: stdout + stderr }),
    );
  });

describe("attestation endpoints on the relayer (development evidence)", function () {
  let stack: Stack;
  let appAuth: string;
  let pins: GovernancePins;
  before(async () => {
    ({ appAuth, pins } = await governedAppAuth());
    stack = await startStack({ payerCount: 1, env: { VESTA_APP_AUTH_ADDRESS: appAuth } });
  });
  after(async () => stack?.stop());

  it("GET /info: the AppAuth address as app_id, the compose hash and app_compose, marked as development", async function () {
    const info = await getJson(stack, "/info");
    expect(info).to.deep.include({ app_id: appAuth.slice(2).toLowerCase(), compose_hash: devComposeHash(), development: true, notice: DEV_NOTICE });
    expect(info.tcb_info.app_compose).to.equal(devAppCompose());
    expect(JSON.parse(info.tcb_info.app_compose).docker_compose_file).to.match(/^services:\n/);
  });

  it("GET /attestation: a quote with zero report data, its event log and vm_config", async function () {
    const a = await getJson(stack, "/attestation");
    const quote = parseTdxQuote(a.quote);
    expect(quote.reportData).to.deep.equal(Buffer.alloc(64));
    expect(quote.development).to.equal(true);
    expect(JSON.parse(a.event_log).map((e: { event: string }) => e.event)).to.include.members(["app-id", "compose-hash", "instance-id", "key-provider"]);
    expect(JSON.parse(a.vm_config)).to.include({ development: true });
  });

  it("GET /evidences/: an HTML listing linking the certificate, checksums, quote and ACME account", async function () {
    const r = await get(stack, "/evidences/");
    expect(r.status).to.equal(200);
    expect(r.type).to.match(/^text\/html/);
    expect(listingLinks(r.body.toString())).to.deep.equal(["cert-localhost.pem", "sha256sum.txt", "quote.json", "acme-account.json"]);
    expect(r.body.toString()).to.contain("NOT from a TEE");
    expect(await get(stack, "/evidences")).to.deep.include({ status: 301, location: "/evidences/" });
  });

  it("GET /evidences/<file>: checksums that match the files, committed to by quote.json's report_data", async function () {
    const checksums = (await get(stack, "/evidences/sha256sum.txt")).body.toString();
    const lines = checksums.trim().split("\n");
    expect(lines.map((l) => l.split("  ")[1])).to.deep.equal(["acme-account.json", "cert-localhost.pem"]);
    for (const line of lines) {
      const [sum, name] = line.split("  ");
      expect(sha256((await get(stack, `/evidences/${name}`)).body), name).to.equal(sum);
    }
    const quote = await getJson(stack, "/evidences/quote.json");
    expect(quote.report_data.slice(0, 64)).to.equal(sha256(checksums));
    expect(parseTdxQuote(quote.quote).reportData.toString("hex")).to.equal(quote.report_data);
    expect((await getJson(stack, "/evidences/acme-account.json")).uri).to.match(/^https:\/\/acme\.invalid\/acct\//);
    expect(new X509Certificate((await get(stack, "/evidences/cert-localhost.pem")).body).subjectAltName).to.equal("DNS:localhost");
  });

  it("answers 404 for other paths and methods, and leaves the core API alone", async function () {
    for (const p of ["/evidences/nope.txt", "/evidences/..%2Fdeployment.json", "/info/x"]) {
      const r = await get(stack, p);
      expect([r.status, JSON.parse(r.body.toString()).code], p).to.deep.equal([404, "not_found"]);
    }
    expect((await get(stack, "/info", { method: "POST" })).status).to.equal(404);
    expect((await get(stack, "/core/v1/get_node_chain_config")).status).to.equal(200);
  });

  it("passes the verifier's checks (TLS skipped on http, CAA skipped for localhost, signatures skipped)", async function () {
    const results = await verifyDeployment(stack.relayer.url, { rpcUrl: stack.rpcUrl, governance: pins });
    expect(results.filter((r) => r.status === "fail")).to.deep.equal([]);
    expect(results.filter((r) => r.status === "skip").map((r) => r.check)).to.deep.equal([
      "platform.quote-signature", "platform.evidence-quote-signature", "application.compose-file", "application.image-signatures", "network.tls-certificate", "network.caa",
    ]);
  });

  it("npm run verify prints the table and exits 0 when nothing fails", async function () {
    const { code, out } = await verifyCli(stack.relayer.url, "--rpc-url", stack.rpcUrl, "--safe", pins.safe!, "--safe-threshold", "2", "--safe-owners", pins.safeOwners!.join(","));
    expect(code).to.equal(0);
    expect(out).to.match(/governance\.compose-hash-allowed +PASS +allowedComposeHashes/);
    expect(out).to.match(/governance\.safe-owners +PASS +the Safe's owners are the 3 expected/);
    expect(out).to.contain("15 passed, 0 failed, 6 skipped (a skipped check proves nothing)");
    expect(out).to.contain("This is DEVELOPMENT evidence: it was not produced by a TEE");
  });

  it("npm run verify fails on pins that the chain contradicts, and refuses malformed pins (exit 2)", async function () {
    const wrong = await verifyCli(stack.relayer.url, "--rpc-url", stack.rpcUrl, "--safe", pins.safe!, "--safe-threshold", "3");
    expect(wrong.code).to.equal(1);
    expect(wrong.out).to.match(/governance\.safe-threshold +FAIL +the Safe needs 2 of 3 owners, not the expected 3/);
    const malformed = await verifyCli(stack.relayer.url, "--safe-owners", `${pins.safe},0x1234`, "--app-auth-code-hash", "abc");
    expect(malformed.code).to.equal(2);
    expect(malformed.out).to.contain("--app-auth-code-hash must be 0x and 64 hex characters; not an address: 0x1234");
  });
});

/** A stand-in dstack guest agent: Info with a given app_compose, GetQuote with the real fixture quote. */
async function fakeGuestAgent(appCompose: string) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "vesta-attest-"));
  const socket = path.join(dir, "dstack.sock");
  const quotes: string[] = [];
  const answers: Partial<Record<string, (body: any) => unknown>> = {
    "/Info": () => ({
      app_id: "ab".repeat(20), instance_id: "cd".repeat(20), app_name: "vesta", compose_hash: composeHash(appCompose),
      tcb_info: JSON.stringify({ app_compose: appCompose, rtmr3: parseTdxQuote(fixture.quote).rtmr3.toString("hex") }),
    }),
    "/GetQuote": (body) => {
      quotes.push(body.report_data);
      return { quote: fixture.quote, event_log: fixture.event_log, report_data: body.report_data, vm_config: fixture.vm_config };
    },
  };
  const server = http.createServer((req, res) => {
    let body = "";
    req.on("data", (c) => (body += c));
    req.on("end", () => {
      const answer = answers[req.url ?? ""];
      const out = JSON.stringify(answer ? answer(JSON.parse(body || "{}")) : {});
      res.writeHead(answer ? 200 : 404, { "content-type": "application/json", "content-length": Buffer.byteLength(out) }).end(out);
    });
  });
  await new Promise<void>((resolve) => server.listen(socket, resolve));
  return { dir, socket, quotes, close: () => new Promise((resolve) => server.close(resolve)) };
}

describe("attestation endpoints on the relayer (dstack source)", function () {
  let stack: Stack;
  let agent: Awaited<ReturnType<typeof fakeGuestAgent>>;
  const evidenceDir = fs.mkdtempSync(path.join(os.tmpdir(), "vesta-evidences-"));
  before(async () => {
    agent = await fakeGuestAgent(devAppCompose());
    // What the ingress container writes: a certificate, the ACME account, the checksums and quote.
    const dev = developmentEvidence({ appId: "ab".repeat(20), domain: "vesta.example.com" });
    for (const name of ["cert-vesta.example.com.pem", "acme-account.json", "sha256sum.txt", "quote.json"]) {
      fs.writeFileSync(path.join(evidenceDir, name), (await dev.source.document(`/evidences/${name}`))!.body);
    }
    fs.mkdirSync(path.join(evidenceDir, "private"));
    stack = await startStack({ payerCount: 1, env: { VESTA_ATTESTATION_SOURCE: "dstack", VESTA_DSTACK_ENDPOINT: agent.socket, VESTA_EVIDENCE_DIR: evidenceDir } });
  });
  after(async () => {
    await stack?.stop();
    await agent?.close();
    fs.rmSync(evidenceDir, { recursive: true, force: true });
    if (agent) fs.rmSync(agent.dir, { recursive: true, force: true });
  });

  it("serves the guest agent's Info and its quote for zero report data, not marked as development", async function () {
    const info = await getJson(stack, "/info");
    expect(info).to.deep.include({ app_id: "ab".repeat(20), compose_hash: devComposeHash(), development: false });
    expect(info.tcb_info.app_compose).to.equal(devAppCompose());
    const a = await getJson(stack, "/attestation");
    expect(a).to.deep.include({ quote: fixture.quote, event_log: fixture.event_log, development: false });
    await getJson(stack, "/attestation");
    expect(agent.quotes).to.deep.equal(["00".repeat(64)]); // asked once, then kept
  });

  it("lists and serves the evidence directory's files, and nothing else", async function () {
    const listing = (await get(stack, "/evidences/")).body.toString();
    expect(listingLinks(listing)).to.deep.equal(["acme-account.json", "cert-vesta.example.com.pem", "quote.json", "sha256sum.txt"]);
    expect((await get(stack, "/evidences/sha256sum.txt")).body).to.deep.equal(fs.readFileSync(path.join(evidenceDir, "sha256sum.txt")));
    expect((await get(stack, "/evidences/private")).status).to.equal(404);
  });

  it("lets the verifier replay the real quote's event log through the relayer", async function () {
    const results = statuses(await verifyDeployment(stack.relayer.url));
    expect(results).to.include({
      "platform.event-log": "pass", // the real TDX quote and event log
      "platform.quote-signature": "skip", // no collateral here
      "application.compose-hash": "pass",
      "application.measured-compose-hash": "fail", // the fixture measured another app's compose hash
      "network.report-data": "pass",
    });
    const { code, out } = await verifyCli(stack.relayer.url);
    expect(code).to.equal(1);
    expect(out).to.match(/application\.measured-compose-hash +FAIL +the compose-hash event of \/attestation measured 3763bc34/);
  });
});
