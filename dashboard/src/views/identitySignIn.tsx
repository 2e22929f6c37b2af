/** The identity sign-in methods the node offers: passkey, e-mail code, and each configured OpenID provider. */
import { useEffect, useState } from "preact/hooks";
import { startAuthentication, startRegistration } from "@simplewebauthn/browser";
import { emailSignIn, oidcSignIn, passkeyRegister, passkeySignIn, signInMethods } from "@client/identity";
import { publicApi } from "../backend";
import { IdentityBackend, type SignedIn } from "../identity";
import { saveKey } from "../session";
import { Alert, Section, useAction } from "../ui";
import { EmailCodeForm } from "./emailCodeForm";
import { startProvider, takeReturned } from "../oidcRedirect";

type Methods = Awaited<ReturnType<typeof signInMethods>>;

export function IdentitySignIn({ onIn }: { onIn: (b: IdentityBackend) => void }) {
  const act = useAction();
  const [methods, setMethods] = useState<Methods>();

  const done = (method: string) => (s: SignedIn) => {
    saveKey(s.session_token);
    onIn(new IdentityBackend(s.session_token, s.api_key_hash, method));
  };

  useEffect(() => {
    signInMethods(publicApi()).then(setMethods, () => setMethods({ oidc: [], email: false, passkey: false }));
    const returned = takeReturned("sign-in");
    if (returned && "refused" in returned) act.setError(returned.refused);
    else if (returned) void act.run(async () => done("oidc")(await oidcSignIn(publicApi(), returned.token)));
  }, []);

  if (!methods || (!methods.passkey && !methods.email && methods.oidc.length === 0)) return null;

  const withProvider = (issuer: string, clientId: string) => act.run(() => startProvider(issuer, clientId, "sign-in"));

  return (
    <Section title="Sign in with a passkey, an e-mail code or a provider">
      <Alert error={act.error} />
      <p class="hint">An account owned by your sign-in: its admin wallet is derived inside the service's TEE from your identity; you can hand it to your own wallet at any time.</p>
      {methods.passkey && (
        <div class="identity-passkey">
          <button type="button" class="primary" disabled={act.busy} onClick={() => act.run(async () => done("passkey")(await passkeySignIn(publicApi(), (optionsJSON) => startAuthentication({ optionsJSON }) as never)))}>
            Sign in with a passkey
          </button>{" "}
          <button type="button" disabled={act.busy} onClick={() => act.run(async () => done("passkey")(await passkeyRegister(publicApi(), (optionsJSON) => startRegistration({ optionsJSON }) as never)))}>
            Create an account with a passkey
          </button>
        </div>
      )}
      {methods.email && (
        <EmailCodeForm
          act={act}
          names={["identity_email", "identity_code"]}
          labels={{ email: "E-mail address", code: "Code from the e-mail", send: "E-mail me a code", use: "Sign in with the code" }}
          onCode={async (email, code) => done("email")(await emailSignIn(publicApi(), email, code))}
        />
      )}
      {methods.oidc.map((p) => (
        <button key={p.issuer} type="button" disabled={act.busy} onClick={() => withProvider(p.issuer, p.audiences[0])}>
          Sign in with {p.name}
        </button>
      ))}
    </Section>
  );
}

