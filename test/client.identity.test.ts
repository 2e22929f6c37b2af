import { expect } from "chai";
import { createVestaClient, VestaApiError } from "../client";
import { emailSignIn, linkEmail, linkedMethods, sendEmailCode, signInMethods, unlinkMethod } from "../client/identity";
import { startStack, type Stack } from "./helpers/relayer";

describe("typed client: identity helpers (issue 21)", function () {
  this.timeout(120_000);
  let stack: Stack;
  const mails: { email: string; code: string }[] = [];
  before(async () => {
    stack = await startStack({ env: { VESTA_EMAIL_CODES: "log" } });
    stack.relayer.ctx.identity.email!.mailer = (email, code) => void mails.push({ email, code });
  });
  after(async () => stack?.stop());

  it("signs in with an e-mail code, links a second address with the session, lists and unlinks, with the API's errors as VestaApiError", async () => {
    const vesta = createVestaClient({ baseUrl: stack.relayer.url });
    expect(await signInMethods(vesta)).to.deep.equal({ oidc: [], email: true, passkey: false });
    await sendEmailCode(vesta, "uma@example.com");
    const s = await emailSignIn(vesta, "uma@example.com", mails[mails.length - 1].code, { account_name: "uma" });
    expect(s.account_created).to.equal(true);
    const session = createVestaClient({ baseUrl: stack.relayer.url, apiKey: s.session_token });
    await sendEmailCode(vesta, "uma@work.example");
    const linked = await linkEmail(session, "uma@work.example", mails[mails.length - 1].code);
    expect(linked.admin_wallet_address).to.equal(s.admin_wallet_address);
    expect((await linkedMethods(session)).methods.map((m) => m.subject)).to.deep.equal(["uma@example.com", "uma@work.example"]);
    const unlinked = await unlinkMethod(session, { method: "email", issuer: "email", subject: "uma@example.com" });
    expect(unlinked.session_token, "the session came from the unlinked method: not renewed").to.equal(undefined);
    const revoked = await linkedMethods(session).catch((e) => e);
    expect(revoked).to.be.instanceOf(VestaApiError);
    expect(revoked).to.include({ status: 401, code: "invalid_session" });
    await sendEmailCode(vesta, "uma@work.example");
    const work = createVestaClient({ baseUrl: stack.relayer.url, apiKey: (await emailSignIn(vesta, "uma@work.example", mails[mails.length - 1].code)).session_token });
    const err = await unlinkMethod(work, { method: "email", issuer: "email", subject: "uma@work.example" }).catch((e) => e);
    expect(err).to.be.instanceOf(VestaApiError);
    expect(err).to.include({ status: 409, code: "last_method" });
    await sendEmailCode(vesta, "uma@work.example");
    const again = await emailSignIn(vesta, "uma@work.example", mails[mails.length - 1].code);
    expect(again.admin_wallet_address).to.equal(s.admin_wallet_address);
  });
});
