import { Writable } from "node:stream";
import { expect } from "chai";
import pino from "pino";
import { loadTriggersConfig } from "../triggers/config";
import { approvedTokenAt, http, startHarness, type Harness } from "./helpers/triggers";
import { startSmtpListener, type SmtpListener } from "./helpers/smtpListener";
import path from "node:path";
import { rawQuery } from "./helpers/rawDb";

/** The sign-in link in a received mail (its body may be quoted-printable). */
function linkIn(data: string): string {
  const body = data.replace(/=\r\n/g, "").replace(/=([0-9A-F]{2})/g, (_m, h: string) => String.fromCharCode(parseInt(h, 16)));
  return /(http:\/\/127\.0\.0\.1:\d+\/auth\/magic\?\S+)/.exec(body)![1];
}

/** A logger whose lines are kept in `lines`. */
function capturedLogger() {
  const lines: string[] = [];
  const logger = pino({ level: "trace" }, new Writable({ write: (chunk, _enc, done) => (lines.push(String(chunk)), done()) }));
  return { lines, logger };
}

describe("triggers: sign-in links sent by SMTP (TRIGGERS_SMTP_URL)", function () {
  this.timeout(60_000);
  let smtp: SmtpListener;
  let h: Harness | undefined;
  before(async () => {
    smtp = await startSmtpListener();
  });
  afterEach(async () => {
    await h?.stop();
    h = undefined;
  });
  after(async () => smtp?.close());

  it("mails the link to the address through the SMTP server, the link signs in and approves a client, and no log line holds it", async () => {
    const log = capturedLogger();
    h = await startHarness({ TRIGGERS_CORE_URL: "http://127.0.0.1:9", TRIGGERS_SMTP_URL: smtp.url, TRIGGERS_EMAIL_FROM: "Vesta triggers <no-reply@vesta.test>", TRIGGERS_LOG_LEVEL: "trace" }, { mailer: undefined, logger: log.logger });
    const before = smtp.mails.length;
    const token = await approvedTokenAt(h.svc.url, "Uma@Example.com", async () => linkIn(smtp.mails[before].data));
    expect(smtp.mails.length - before).to.equal(1);
    const mail = smtp.mails[before];
    expect(mail.from).to.equal("<no-reply@vesta.test>");
    expect(mail.to).to.deep.equal(["<uma@example.com>"]);
    expect(mail.data).to.match(/^Subject: Sign in to Vesta triggers$/m);
    const me = await http(`${h.svc.url}/api/me`, { token });
    expect([me.status, me.body.email]).to.deep.equal([200, "uma@example.com"]);
    const linkToken = new URL(linkIn(mail.data)).searchParams.get("token")!;
    expect(linkToken).to.match(/^[\w-]{20,}$/);
    expect(log.lines.join("")).to.include("sign-in link sent by e-mail").and.not.to.include(linkToken);
  });

  it("an SMTP server that is down: 503 mail_unavailable, and the link it made is void (no row left)", async () => {
    const down = await startSmtpListener();
    await down.close();
    h = await startHarness({ TRIGGERS_CORE_URL: "http://127.0.0.1:9", TRIGGERS_SMTP_URL: down.url, TRIGGERS_EMAIL_FROM: "no-reply@vesta.test" }, { mailer: undefined });
    const r = await http(`${h.svc.url}/auth/login`, { method: "POST", body: { email: "vic@example.com" } });
    expect([r.status, r.body.code]).to.deep.equal([503, "mail_unavailable"]);
    expect(await rawQuery({ sqliteFile: path.join(h.dataDir, "triggers.sqlite") }, "SELECT COUNT(*) AS n FROM magic_links")).to.deep.equal([{ n: 0 }]);
  });
});

describe("triggers: the mail transport in the configuration", () => {
  const base = { TRIGGERS_CORE_URL: "http://127.0.0.1:8000", TRIGGERS_PUBLIC_URL: "https://triggers.example.com" };
  const problems = (env: Record<string, string>) => {
    try {
      loadTriggersConfig({ ...base, ...env });
      return "";
    } catch (err) {
      return (err as Error).message;
    }
  };

  it("production refuses to boot without an SMTP transport (links are never only logged), or without TLS or a From address, naming the variable", () => {
    expect(problems({ VESTA_MODE: "production" })).to.include("TRIGGERS_SMTP_URL: production (sign-in links go by e-mail, never to the log) needs the SMTP server's URL");
    expect(problems({ VESTA_MODE: "production", TRIGGERS_SMTP_URL: "smtp://mail.example.com:587", TRIGGERS_EMAIL_FROM: "a@example.com" })).to.include("TRIGGERS_SMTP_URL: production sends sign-in links over TLS only");
    expect(problems({ VESTA_MODE: "production", TRIGGERS_SMTP_URL: "smtps://u:p@mail.example.com:465" })).to.include("TRIGGERS_EMAIL_FROM: the From address of the sign-in links");
    const ok = loadTriggersConfig({ ...base, VESTA_MODE: "production", TRIGGERS_SMTP_URL: "smtps://u:p@mail.example.com:465", TRIGGERS_EMAIL_FROM: "Vesta <no-reply@example.com>" });
    expect(ok.smtp).to.deep.equal({ url: "smtps://u:p@mail.example.com:465", from: "Vesta <no-reply@example.com>" });
  });

  it("development prints links without SMTP, and takes plain smtp:// when one is set", () => {
    expect(loadTriggersConfig({ ...base, VESTA_MODE: "development" }).smtp).to.equal(undefined);
    expect(loadTriggersConfig({ ...base, VESTA_MODE: "development", TRIGGERS_SMTP_URL: "smtp://127.0.0.1:2525", TRIGGERS_EMAIL_FROM: "a@example.com" }).smtp).to.deep.equal({ url: "smtp://127.0.0.1:2525", from: "a@example.com" });
    expect(problems({ VESTA_MODE: "development", TRIGGERS_EMAIL_FROM: "a@example.com" })).to.include("TRIGGERS_EMAIL_FROM is set without TRIGGERS_SMTP_URL");
  });
});
