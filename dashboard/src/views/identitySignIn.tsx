/** The identity sign-in methods the node offers: passkey, e-mail code, and each configured OpenID provider. */
import { useEffect, useState } from "preact/hooks";
import { startAuthentication, startRegistration } from "@simplewebauthn/browser";
import { emailSignIn, oidcNonce, oidcSignIn, passkeyRegister, passkeySignIn, signInMethods } from "@client/identity";
import { publicApi, serviceBase } from "../backend";
import { IdentityBackend, type SignedIn } from "../identity";
import { saveKey } from "../session";
import { Alert, Section, useAction } from "../ui";
import { EmailCodeForm } from "./emailCodeForm";

type Methods = Awaited<ReturnType<typeof signInMethods>>;
/** The provider sign-in this tab started: its state and nonce (sessionStorage: this tab only, gone with it). */
const PENDING = "vesta.oidc.pending";

/** Where an OpenID provider sends the browser back: this page, the ID token in the fragment. */
const returnUrl = () => `${serviceBase()}/dashboard/`;

const random = () => btoa(String.fromCharCode(...crypto.getRandomValues(new Uint8Array(24)))).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");

/**
 * The provider's answer in the fragment (#id_token=...&state=... or #error=...), taken out of the
 * address bar, and checked against the sign-in this tab started (taken too: one answer each). An
 * answer this tab did not ask for (its state differs: a link someone else made, to sign this
 * browser into their account) or whose token carries another nonce is refused before it is sent.
 */
function takeReturned(): { token: string } | { refused: string } | undefined {
  const params = new URLSearchParams(window.location.hash.replace(/^#/, ""));
  const token = params.get("id_token");
  const error = params.get("error");
  if (!token && !error) return undefined;
  history.replaceState(null, "", window.location.pathname + window.location.search);
  const raw = sessionStorage.getItem(PENDING);
  sessionStorage.removeItem(PENDING);
  let pending: { state?: unknown; nonce?: unknown } | undefined;
  try {
    pending = raw ? JSON.parse(raw) : undefined;
  } catch {
    pending = undefined;
  }
  if (!pending || typeof pending.state !== "string" || params.get("state") !== pending.state) {
    return { refused: "refused: this sign-in answer was not asked for by this tab (its state does not match); nothing was signed in: sign in again" };
  }
  if (error) return { refused: `the provider refused the sign-in: ${error.slice(0, 200)}` };
  let nonce: unknown;
  try {
    nonce = JSON.parse(atob(token!.split(".")[1].replace(/-/g, "+").replace(/_/g, "/"))).nonce;
  } catch {
    nonce = undefined;
  }
  if (nonce !== pending.nonce) return { refused: "refused: the provider's ID token carries another nonce than this tab's sign-in; nothing was signed in: sign in again" };
  return { token: token! };
}

export function IdentitySignIn({ onIn }: { onIn: (b: IdentityBackend) => void }) {
  const act = useAction();
  const [methods, setMethods] = useState<Methods>();

  const done = (method: string) => (s: SignedIn) => {
    saveKey(s.session_token);
    onIn(new IdentityBackend(s.session_token, s.api_key_hash, method));
  };

  useEffect(() => {
    signInMethods(publicApi()).then(setMethods, () => setMethods({ oidc: [], email: false, passkey: false }));
    const returned = takeReturned();
    if (returned && "refused" in returned) act.setError(returned.refused);
    else if (returned) void act.run(async () => done("oidc")(await oidcSignIn(publicApi(), returned.token)));
  }, []);

  if (!methods || (!methods.passkey && !methods.email && methods.oidc.length === 0)) return null;

  const withProvider = (issuer: string, clientId: string) =>
    act.run(async () => {
      const { nonce } = await oidcNonce(publicApi());
      const discovery = await (await fetch(`${issuer.replace(/\/+$/, "")}/.well-known/openid-configuration`)).json();
      if (typeof discovery.authorization_endpoint !== "string") throw new Error(`${issuer} publishes no authorization endpoint`);
      const state = random();
      sessionStorage.setItem(PENDING, JSON.stringify({ state, nonce }));
      const url = new URL(discovery.authorization_endpoint);
      for (const [k, v] of Object.entries({ client_id: clientId, response_type: "id_token", scope: "openid email", redirect_uri: returnUrl(), nonce, state, response_mode: "fragment" })) url.searchParams.set(k, v);
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

