/**
 * The sign-in methods of the signed-in identity: listed, another one linked (a passkey, an e-mail
 * address), one unlinked (never the last: the button is off, and the service refuses it anyway).
 * Linking and unlinking need a sign-in of the last 5 minutes (the service says so otherwise).
 * An unlink revokes every session of the identity: this tab continues with the renewed session the
 * service hands back, or is signed out when its own method was the one unlinked.
 */
import { useEffect } from "preact/hooks";
import { startRegistration } from "@simplewebauthn/browser";
import { linkEmail, linkedMethods, linkIdToken, linkPasskey, signInMethods, unlinkMethod } from "@client/identity";
import { publicApi } from "../backend";
import { startProvider, takeReturned } from "../oidcRedirect";
import { EmailCodeForm } from "./emailCodeForm";
import { IdentityBackend } from "../identity";
import { saveKey } from "../session";
import { Alert, Section, useAction, useLoad } from "../ui";

type Method = { method: "oidc" | "email" | "passkey"; issuer: string; subject: string };

const describe = (m: Method) => (m.method === "email" ? `e-mail ${m.subject}` : m.method === "passkey" ? `passkey ${m.subject.slice(0, 8)}…` : `${m.issuer} (${m.subject})`);

export function IdentityMethodsView({ backend, onSession }: { backend: IdentityBackend; onSession: (next: IdentityBackend | undefined, why?: string) => void }) {
  const act = useAction();
  const list = useLoad(async () => (await linkedMethods(backend.api)).methods as Method[], [backend]);
  const methods = list.data ?? [];
  const offered = useLoad(() => signInMethods(publicApi()), []);

  useEffect(() => {
    const returned = takeReturned("link"); // back from a provider this tab went to for a link
    if (returned && "refused" in returned) act.setError(returned.refused);
    else if (returned)
      void act.run(async () => {
        await linkIdToken(backend.api, returned.token);
        list.reload();
      });
  }, []);

  const unlink = (m: Method) =>
    act.run(async () => {
      const r = await unlinkMethod(backend.api, m);
      if (!r.session_token) return onSession(undefined, `the method this session came from (${describe(m)}) was unlinked: sign in with another of your methods`);
      saveKey(r.session_token);
      onSession(new IdentityBackend(r.session_token, backend.accountHash, backend.method));
    });

  return (
    <Section title="Sign-in methods">
      <Alert error={act.error ?? list.error} />
      <p class="hint">Each method signs into this identity and its wallet. Unlinking one signs out every session of this identity elsewhere.</p>
      <ul data-testid="identity-methods">
        {methods.map((m) => (
          <li key={`${m.method}\n${m.issuer}\n${m.subject}`}>
            <span class="mono">{describe(m)}</span>{" "}
            <button type="button" disabled={act.busy || methods.length <= 1} title={methods.length <= 1 ? "the last method is never unlinked" : undefined} onClick={() => unlink(m)}>
              Unlink
            </button>
          </li>
        ))}
      </ul>
      <button
        type="button"
        disabled={act.busy}
        onClick={() =>
          act.run(async () => {
            await linkPasskey(backend.api, (optionsJSON) => startRegistration({ optionsJSON }) as never);
            list.reload();
          })
        }
      >
        Add a passkey
      </button>
      {(offered.data?.oidc ?? []).map((p) => (
        <button key={p.issuer} type="button" disabled={act.busy} onClick={() => act.run(() => startProvider(p.issuer, p.audiences[0], "link"))}>
          Link {p.name}
        </button>
      ))}
      <EmailCodeForm
        act={act}
        names={["link_email", "link_code"]}
        labels={{ email: "Another e-mail address", code: "Code sent to that address", send: "Send a code to link it", use: "Link this address" }}
        onCode={async (email, code) => {
          await linkEmail(backend.api, email, code);
          list.reload();
        }}
      />
    </Section>
  );
}
