import path from "node:path";
import { Writable } from "node:stream";
import { expect } from "chai";
import nodemailer from "nodemailer";
import pino from "pino";
import { call, startStack, type Stack } from "./helpers/relayer";
import { startSmtpListener, type SmtpListener } from "./helpers/smtpListener";
import { rawQuery } from "./helpers/rawDb";
import { loadIdentityConfig } from "../relayer/identity/config";
import { codeMailer } from "../relayer/identity/mailer";

/** The code in a received mail (its subject and body carry it). */
const codeIn = (data: string): string => /sign-in code is (\d{6})/.exec(data)![1];

describe("identity: e-mail codes sent by SMTP (issue 21)", function () {
  this.timeout(120_000);
  let smtp: SmtpListener;
  let stack: Stack;
  before(async () => {
    smtp = await startSmtpListener();
    stack = await startStack({ env: { VESTA_EMAIL_CODES: "smtp", VESTA_SMTP_URL: smtp.url, VESTA_EMAIL_FROM: "Vesta <no-reply@vesta.test>" } });
  });
  after(async () => {
    await stack?.stop();
    await smtp?.close();
  });

  it("VESTA_EMAIL_CODES=smtp sends the code to the address through the SMTP server, and that code signs in", async () => {
    expect((await call(stack, "GET", "/identity/methods")).body.email).to.equal(true);
    const r = await call(stack, "POST", "/identity/email/send_code", { body: { email: "Quinn@Example.com" } });
    expect(r.status, JSON.stringify(r.body)).to.equal(200);
    expect(smtp.mails).to.have.length(1);
    const [mail] = smtp.mails;
    expect(mail.from).to.equal("<no-reply@vesta.test>");
    expect(mail.to).to.deep.equal(["<quinn@example.com>"]);
    expect(mail.data).to.match(/^Subject: Your Vesta sign-in code: \d{6}$/m);
    const signIn = await call(stack, "POST", "/identity/email/sign_in", { body: { email: "quinn@example.com", code: codeIn(mail.data) } });
    expect(signIn.status, JSON.stringify(signIn.body)).to.equal(200);
    expect(signIn.body.account_created).to.equal(true);
  });

  it("an SMTP server that is down: 503 mail_unavailable, and the code it made is void", async () => {
    const down = await startSmtpListener();
    await down.close();
    const s2 = await startStack({ env: { VESTA_EMAIL_CODES: "smtp", VESTA_SMTP_URL: down.url, VESTA_EMAIL_FROM: "no-reply@vesta.test" } });
    try {
      const r = await call(s2, "POST", "/identity/email/send_code", { body: { email: "rita@example.com" } });
      expect(r.status, JSON.stringify(r.body)).to.equal(503);
      expect(r.body.code).to.equal("mail_unavailable");
      const pending = await rawQuery<{ n: number }>({ sqliteFile: path.join(s2.relayerConfig.dataDir, "identity.sqlite") }, "SELECT COUNT(*) AS n FROM identity_once WHERE kind = 'email'");
      expect(pending[0].n, "no code pending").to.equal(0);
    } finally {
      await s2.stop();
    }
  });
});

describe("identity: the mail configuration and the log (issue 21)", () => {
  const production = (env: Record<string, string>) => loadIdentityConfig(env, "production");

  it("production takes SMTP over TLS only, never the log mailer, and needs a From address", () => {
    expect(production({ VESTA_EMAIL_CODES: "log" }).problems.join("\n")).to.include("exist only with VESTA_MODE=development");
    expect(production({ VESTA_EMAIL_CODES: "smtp", VESTA_SMTP_URL: "smtp://mail.example.com:587", VESTA_EMAIL_FROM: "a@example.com" }).problems.join("\n")).to.include("TLS only");
    expect(production({ VESTA_EMAIL_CODES: "smtp", VESTA_SMTP_URL: "https://mail.example.com", VESTA_EMAIL_FROM: "a@example.com" }).problems.join("\n")).to.include("VESTA_SMTP_URL");
    expect(production({ VESTA_EMAIL_CODES: "smtp", VESTA_SMTP_URL: "smtps://u:p@mail.example.com:465" }).problems.join("\n")).to.include("VESTA_EMAIL_FROM");
    const ok = production({ VESTA_EMAIL_CODES: "smtp", VESTA_SMTP_URL: "smtps://u:p@mail.example.com:465", VESTA_EMAIL_FROM: "Vesta <no-reply@example.com>" });
    expect(ok.problems).to.deep.equal([]);
    expect(ok.config.smtp).to.deep.equal({ url: "smtps://u:p@mail.example.com:465", from: "Vesta <no-reply@example.com>" });
    expect(production({ VESTA_EMAIL_CODES: "smtp", VESTA_SMTP_URL: "smtp://u:p@mail.example.com:587?requireTLS=true", VESTA_EMAIL_FROM: "a@example.com" }).problems).to.deep.equal([]);
  });

  it("in production the code goes into the mail only: no log line holds it (nor the address's mailbox secret)", async () => {
    const lines: string[] = [];
    const logger = pino({ level: "trace" }, new Writable({ write: (chunk, _enc, done) => (lines.push(String(chunk)), done()) }));
    const { config } = production({ VESTA_EMAIL_CODES: "smtp", VESTA_SMTP_URL: "smtps://u:secret-pass@mail.example.com:465", VESTA_EMAIL_FROM: "no-reply@example.com" });
    const transport = nodemailer.createTransport({ streamTransport: true, buffer: true });
    const sent: string[] = [];
    const wrapped = { sendMail: async (m: nodemailer.SendMailOptions) => { const info = await transport.sendMail(m); sent.push(String(info.message)); return info; } } as unknown as nodemailer.Transporter;
    const mailer = codeMailer(config, 10, logger, wrapped)!;
    await mailer("sam@example.com", "482913");
    expect(sent).to.have.length(1);
    expect(sent[0]).to.include("482913");
    expect(lines.length, "the send is logged").to.be.greaterThan(0);
    for (const l of lines) {
      expect(l).not.to.include("482913");
      expect(l).not.to.include("secret-pass");
    }
  });
});
