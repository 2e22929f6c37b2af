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
