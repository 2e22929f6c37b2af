import { expect } from "chai";
import { loadIdentityConfig } from "../relayer/identity/config";
import { call, startStack } from "./helpers/relayer";
import { expectError } from "./helpers/relayerChecks";

describe("identity: passkey configuration (issue 21)", function () {
  this.timeout(120_000);
  const problems = (env: Record<string, string>, mode: "production" | "development" = "production") => loadIdentityConfig(env, mode).problems.join("\n");

  it("passkeys are off unless VESTA_PASSKEY_RP_ID is set; then they need origins on that domain, https in production", () => {
    expect(loadIdentityConfig({}, "production").config.passkey).to.equal(undefined);
    expect(problems({ VESTA_PASSKEY_ORIGINS: "https://example.com" })).to.include("without VESTA_PASSKEY_RP_ID");
    expect(problems({ VESTA_PASSKEY_RP_ID: "example.com" })).to.include("VESTA_PASSKEY_ORIGINS: the origins");
    expect(problems({ VESTA_PASSKEY_RP_ID: "https://example.com", VESTA_PASSKEY_ORIGINS: "https://example.com" })).to.include("a lower-case domain name");
    expect(problems({ VESTA_PASSKEY_RP_ID: "127.0.0.1", VESTA_PASSKEY_ORIGINS: "http://127.0.0.1" }, "development")).to.include("not a URL or an IP address");
    expect(problems({ VESTA_PASSKEY_RP_ID: "example.com", VESTA_PASSKEY_ORIGINS: "https://evil.com" })).to.include("not on example.com");
    expect(problems({ VESTA_PASSKEY_RP_ID: "example.com", VESTA_PASSKEY_ORIGINS: "https://notexample.com" })).to.include("not on example.com");
    expect(problems({ VESTA_PASSKEY_RP_ID: "example.com", VESTA_PASSKEY_ORIGINS: "https://app.example.com/login" })).to.include("not an origin");
    expect(problems({ VESTA_PASSKEY_RP_ID: "example.com", VESTA_PASSKEY_ORIGINS: "http://app.example.com" })).to.include("https origins only");
    const ok = loadIdentityConfig({ VESTA_PASSKEY_RP_ID: "example.com", VESTA_PASSKEY_ORIGINS: "https://example.com, https://app.example.com" }, "production");
    expect(ok.problems).to.deep.equal([]);
    expect(ok.config.passkey).to.deep.equal({ rpId: "example.com", origins: ["https://example.com", "https://app.example.com"], rpName: "Vesta" });
  });

  it("with passkeys off, every passkey route answers 404 identity_method_off and stores nothing", async () => {
    const stack = await startStack();
    try {
      expect((await call(stack, "GET", "/identity/methods")).body.passkey).to.equal(false);
      for (const p of ["/identity/passkey/register_options", "/identity/passkey/options"]) await expectError(await call(stack, "POST", p, { body: {} }), 404, "identity_method_off", "VESTA_PASSKEY_RP_ID");
    } finally {
      await stack.stop();
    }
  });
});

describe("identity: hostile passkey input (issue 21)", function () {
  this.timeout(120_000);
  it("malformed responses are a clear 400/401 naming the problem, never a 5xx, and take no challenge they do not carry", async () => {
    const stack = await startStack({ env: { VESTA_PASSKEY_RP_ID: "localhost", VESTA_PASSKEY_ORIGINS: "http://localhost:1" } });
    try {
      const b64 = (o: unknown) => Buffer.from(typeof o === "string" ? o : JSON.stringify(o)).toString("base64url");
      const { challenge } = (await call(stack, "POST", "/identity/passkey/options", { body: {} })).body.options;
      const assertion = (clientData: unknown, extra: Record<string, unknown> = {}) => ({
        id: "abc", rawId: "abc", type: "public-key", clientExtensionResults: {},
        response: { clientDataJSON: b64(clientData), authenticatorData: "AAAA", signature: "AAAA", ...extra },
      });
      const signIn = (response: unknown) => call(stack, "POST", "/identity/passkey/sign_in", { body: { response } });
      await expectError(await signIn(assertion("not json")), 401, "invalid_passkey", "not base64url JSON");
      await expectError(await signIn(assertion({ challenge: 42 })), 401, "invalid_passkey", "no challenge issued by this node");
      await expectError(await signIn({ ...assertion({ challenge }), type: "other" }), 400, "invalid_request", "type");
      await expectError(await signIn(assertion({ challenge }, { signature: "not base64url!" })), 400, "invalid_request", "signature");
      await expectError(await signIn({ ...assertion({ challenge }), id: "x".repeat(5000) }), 400, "invalid_request", "id");
      // The challenge is still pending: none of the refusals above got as far as taking it.
      await expectError(await signIn(assertion({ challenge, type: "webauthn.get", origin: "http://localhost:1" })), 401, "invalid_passkey", "not registered on this node");
      // A response that does not verify spends nothing (the challenge is stateless until a response to it verified): refused the same way again.
      await expectError(await signIn(assertion({ challenge, type: "webauthn.get", origin: "http://localhost:1" })), 401, "invalid_passkey", "not registered on this node");
      const reg = await call(stack, "POST", "/identity/passkey/register_options", { body: {} });
      const regResponse = { id: "abc", rawId: "abc", type: "public-key", clientExtensionResults: {}, response: { clientDataJSON: b64({ challenge: reg.body.options.challenge, type: "webauthn.create", origin: "http://localhost:1" }), attestationObject: "AAAA" } };
      await expectError(await call(stack, "POST", "/identity/passkey/register", { body: { response: regResponse } }), 401, "invalid_passkey", "the registration does not verify");
    } finally {
      await stack.stop();
    }
  });
});
