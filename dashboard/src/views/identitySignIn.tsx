/** The identity sign-in methods the node offers: passkey, e-mail code, and each configured OpenID provider. */
import { useEffect, useState } from "preact/hooks";
import { startAuthentication, startRegistration } from "@simplewebauthn/browser";
import { emailSignIn, oidcNonce, oidcSignIn, passkeyRegister, passkeySignIn, sendEmailCode, signInMethods } from "@client/identity";
import { publicApi, serviceBase } from "../backend";
import { IdentityBackend, type SignedIn } from "../identity";
import { saveKey } from "../session";
import { Alert, Field, Form, Section, useAction } from "../ui";

type Methods = Awaited<ReturnType<typeof signInMethods>>;
const RETURN_NONCE = "vesta.oidc.nonce";

/** Where an OpenID provider sends the browser back: this page, the ID token in the fragment. */
const returnUrl = () => `${serviceBase()}/dashboard/`;

/** An ID token handed back in the fragment (#id_token=...&state=...), taken out of the address bar. */
function takeReturnedIdToken(): string | undefined {
  const params = new URLSearchParams(window.location.hash.replace(/^#/, ""));
  const token = params.get("id_token");
  if (!token) return undefined;
  history.replaceState(null, "", window.location.pathname + window.location.search);
  return token;
}

export function IdentitySignIn({ onIn }: { onIn: (b: IdentityBackend) => void }) {
  const act = useAction();
  const [methods, setMethods] = useState<Methods>();
  const [email, setEmail] = useState("");
  const [code, setCode] = useState("");
  const [codeSent, setCodeSent] = useState(false);

  const done = (method: string) => (s: SignedIn) => {
    saveKey(s.session_token);
    onIn(new IdentityBackend(s.session_token, s.api_key_hash, method));
  };

  useEffect(() => {
    signInMethods(publicApi()).then(setMethods, () => setMethods({ oidc: [], email: false, passkey: false }));
    const returned = takeReturnedIdToken();
    if (returned) {
      sessionStorage.removeItem(RETURN_NONCE);
      void act.run(async () => done("oidc")(await oidcSignIn(publicApi(), returned)));
    }
  }, []);

  if (!methods || (!methods.passkey && !methods.email && methods.oidc.length === 0)) return null;

  const withProvider = (issuer: string, clientId: string) =>
    act.run(async () => {
      const { nonce } = await oidcNonce(publicApi());
      const discovery = await (await fetch(`${issuer.replace(/\/+$/, "")}/.well-known/openid-configuration`)).json();
      if (typeof discovery.authorization_endpoint !== "string") throw new Error(`${issuer} publishes no authorization endpoint`);
      sessionStorage.setItem(RETURN_NONCE, nonce);
      const url = new URL(discovery.authorization_endpoint);
      for (const [k, v] of Object.entries({ client_id: clientId, response_type: "id_token", scope: "openid email", redirect_uri: returnUrl(), nonce, response_mode: "fragment" })) url.searchParams.set(k, v);
      window.location.assign(url.toString());
    });

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
        <Form
          onSubmit={() =>
            act.run(async () => {
              if (!codeSent) {
                await sendEmailCode(publicApi(), email.trim());
                setCodeSent(true);
              } else done("email")(await emailSignIn(publicApi(), email.trim(), code.trim()));
            })
          }
        >
          <Field label="E-mail address" name="identity_email" type="email" value={email} onInput={setEmail} required />
          {codeSent && <Field label="Code from the e-mail" name="identity_code" value={code} onInput={setCode} required />}
          <button class="primary" disabled={act.busy}>{codeSent ? "Sign in with the code" : "E-mail me a code"}</button>
        </Form>
      )}
      {methods.oidc.map((p) => (
        <button key={p.issuer} type="button" disabled={act.busy} onClick={() => withProvider(p.issuer, p.audiences[0])}>
          Sign in with {p.name}
        </button>
      ))}
    </Section>
  );
}

