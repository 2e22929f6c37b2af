/**
 * Pending sign-in state cannot be filled by one client (issue 21): WebAuthn challenges are
 * stateless (nothing is kept until a response verified), and pending e-mail codes have a quota per
 * client under the global ceiling. One client asking thousands of times stores nothing (passkey
 * options) or its quota (codes), and another client still signs in.
 */
import path from "node:path";
import { expect } from "chai";
import { call, startStack, type Stack } from "./helpers/relayer";
import { expectError } from "./helpers/relayerChecks";
import { rawQuery } from "./helpers/rawDb";
import { MAX_PENDING_PER_CLIENT } from "../relayer/identity/store";

describe("identity: one client cannot fill the pending sign-in state (issue 21)", function () {
  this.timeout(180_000);
  let stack: Stack;
  const mails: { email: string; code: string }[] = [];
  const from = (ip: string) => ({ "x-forwarded-for": ip });
  const pending = async (kind: string) =>
    (await rawQuery<{ n: number }>({ sqliteFile: path.join(stack.relayerConfig.dataDir, "identity.sqlite") }, `SELECT COUNT(*) AS n FROM identity_once WHERE kind = '${kind}'`))[0].n;

  before(async () => {
    stack = await startStack({
      env: {
        VESTA_EMAIL_CODES: "log",
        VESTA_PASSKEY_RP_ID: "localhost",
        VESTA_PASSKEY_ORIGINS: "http://localhost:8000",
        VESTA_TRUST_PROXY: "loopback", // the test names its clients in X-Forwarded-For
        VESTA_IDENTITY_RATE_LIMIT: "1000000", // the edge limit off: what is tested is the state behind it
      },
    });
    stack.relayer.ctx.identity.email!.mailer = (email, code) => void mails.push({ email, code });
    stack.relayer.ctx.identity.store.limits.total = 200; // a ceiling one client could reach in this test if it were not bounded per client
  });
  after(async () => {
    await stack?.stop();
  });

  /** `n` requests from one client, 16 at a time: their statuses, counted. */
  const flood = async (n: number, send: (i: number) => Promise<{ status: number }>) => {
    const statuses: Record<number, number> = {};
    for (let i = 0; i < n; i += 16) {
      for (const r of await Promise.all(Array.from({ length: Math.min(16, n - i) }, (_, j) => send(i + j)))) statuses[r.status] = (statuses[r.status] ?? 0) + 1;
    }
    return statuses;
  };

  it("thousands of passkey challenges asked by one client store nothing, and every one is answered", async () => {
    const statuses = await flood(2000, (i) => call(stack, "POST", i % 2 ? "/identity/passkey/options" : "/identity/passkey/register_options", { headers: from("203.0.113.7") }));
    expect(statuses).to.deep.equal({ 200: 2000 });
    expect(await pending("webauthn"), "no challenge is kept before a response to it verified").to.equal(0);
  });

  it("one client asking codes for hundreds of addresses holds its quota only; another client still gets a code and signs in", async () => {
    const statuses = await flood(400, (i) => call(stack, "POST", "/identity/email/send_code", { headers: from("203.0.113.8"), body: { email: `victim${i}@example.com` } }));
    expect(statuses).to.deep.equal({ 200: MAX_PENDING_PER_CLIENT, 429: 400 - MAX_PENDING_PER_CLIENT });
    expect(mails, "no mail sent past the quota").to.have.length(MAX_PENDING_PER_CLIENT);
    expect(await pending("email")).to.equal(MAX_PENDING_PER_CLIENT);
    const refused = await call(stack, "POST", "/identity/email/send_code", { headers: from("203.0.113.8"), body: { email: "one-more@example.com" } });
    await expectError(refused, 429, "rate_limited", "pending sign-in codes");
    // A refused client spent nothing of the mailbox's hourly budget: the owner of the address still gets codes.
    expect((await call(stack, "POST", "/identity/email/send_code", { headers: from("198.51.100.9"), body: { email: "one-more@example.com" } })).status).to.equal(200);

    expect((await call(stack, "POST", "/identity/email/send_code", { headers: from("198.51.100.20"), body: { email: "bystander@example.com" } })).status).to.equal(200);
    const code = mails.find((m) => m.email === "bystander@example.com")!.code;
    const signedIn = await call(stack, "POST", "/identity/email/sign_in", { headers: from("198.51.100.20"), body: { email: "bystander@example.com", code } });
    expect(signedIn.status, JSON.stringify(signedIn.body)).to.equal(200);
    expect(signedIn.body.account_created).to.equal(true);
    expect((await call(stack, "POST", "/identity/passkey/options", { headers: from("198.51.100.20") })).status).to.equal(200);
  });

  it("a client's quota frees up as its codes are used", async () => {
    const ip = from("203.0.113.50");
    for (let i = 0; i < MAX_PENDING_PER_CLIENT; i++) expect((await call(stack, "POST", "/identity/email/send_code", { headers: ip, body: { email: `q${i}@example.com` } })).status).to.equal(200);
    await expectError(await call(stack, "POST", "/identity/email/send_code", { headers: ip, body: { email: "q-next@example.com" } }), 429, "rate_limited", "pending sign-in codes");
    const code = mails.find((m) => m.email === "q0@example.com")!.code;
    expect((await call(stack, "POST", "/identity/email/sign_in", { headers: ip, body: { email: "q0@example.com", code } })).status).to.equal(200);
    expect((await call(stack, "POST", "/identity/email/send_code", { headers: ip, body: { email: "q-next@example.com" } })).status).to.equal(200);
  });
});
