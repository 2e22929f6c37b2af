/**
 * Approving a triggers client (spec 3 handshake): a client generated a token and sent its owner
 * here with the token's hash challenge; the owner, signed in to the triggers service, approves it.
 * The triggers service is another origin: its session cookie goes along (credentials: "include")
 * and it allows this dashboard's origin only.
 */
import { useState } from "preact/hooks";
import type { DashboardConfig } from "../session";
import { Alert, Field, Form, Section, useAction, useLoad } from "../ui";
import { triggersApi, triggersCall } from "../triggersApi";

const CHALLENGE = /^[A-Za-z0-9_-]{43}$/;

/**
 * What one authorization link asks to approve, read from the link itself on every render: the view
 * keeps nothing of a link once another is opened in the same tab (App also remounts it per link).
 */
function approvalOf(query: URLSearchParams) {
  const challenge = query.get("challenge") ?? "";
  const ticket = query.get("ticket") ?? "";
  return { challenge, name: query.get("name") ?? "", ticket, complete: CHALLENGE.test(challenge) && ticket !== "" };
}

export function TriggersAuthorizeView({ config, query }: { config: DashboardConfig; query: URLSearchParams }) {
  const base = (config.triggers_url ?? "").replace(/\/+$/, "");
  const asked = query.get("triggers")?.replace(/\/+$/, "");
  const request = approvalOf(query);
  const session = useLoad(() => (base ? triggersApi(base).session() : Promise.resolve(null)), [base]);
  const act = useAction();
  const [email, setEmail] = useState("");
  const [state, setState] = useState<"idle" | "sent" | "approved">("idle");

  const title = "Authorize a triggers client";
  if (!base) return <Section title={title}><Alert error="this node has no triggers service configured (VESTA_TRIGGERS_URL)" /></Section>;
  if (asked && asked !== base) return <Section title={title}><Alert error={`this link names the triggers service ${asked}, but this node's is ${base}: not approving`} /></Section>;
  if (!request.complete) {
    return <Section title={title}><Alert error="this approval link is incomplete (it needs the client's challenge and its ticket): open the client's link at the triggers service and follow its “Approve in the dashboard” link" /></Section>;
  }

  const login = () =>
    act.run(async () => {
      await triggersApi(base).login(email, window.location.href);
      setState("sent");
    });
  // Exactly what is shown: the challenge, name and ticket of this render's link; the service refuses a mix of two links.
  const approve = () =>
    act.run(async () => {
      await triggersCall(base, "/api/authorize", { body: { challenge: request.challenge, name: request.name || undefined, ticket: request.ticket } });
      setState("approved");
    });

  return (
    <Section title={title}>
      <Alert error={session.error ?? act.error} />
      <p>
        A client asks for a token to manage your triggers at <span class="mono">{base}</span>. Approve only if you started it and its challenge is the one it printed.
      </p>
      <dl data-testid="triggers-request">
        <dt>Client name</dt>
        <dd data-testid="triggers-client-name">{request.name || <em>none given (saved as “client”)</em>}</dd>
        <dt>Challenge</dt>
        <dd class="mono" data-testid="triggers-challenge">{request.challenge}</dd>
      </dl>
      {session.data === undefined && !session.error && <p>Checking your triggers session…</p>}
      {session.data === null && state !== "sent" && (
        <Form onSubmit={() => login()}>
          <p>Sign in to the triggers service first: it e-mails you a link that brings you back here.</p>
          <Field label="E-mail" name="triggers_email" type="email" value={email} onInput={setEmail} required />
          <button class="primary" disabled={act.busy}>Send me a sign-in link</button>
        </Form>
      )}
      {state === "sent" && <p class="ok" role="status">A sign-in link is on its way (on a local node it is printed in the triggers service's log). Open it, then approve here.</p>}
      {session.data && state !== "approved" && (
        <div>
          <p>
            Signed in to triggers as <strong data-testid="triggers-email">{session.data.email}</strong>.
          </p>
          <button type="button" class="primary" disabled={act.busy} onClick={approve}>
            Approve {request.name ? `“${request.name}”` : "this client"}
          </button>
        </div>
      )}
      {state === "approved" && (
        <p class="ok" role="status" data-testid="triggers-approved">
          Approved {request.name ? `“${request.name}”` : "the client"} (challenge <span class="mono">{request.challenge}</span>): it can now use its token. You can close this page.
        </p>
      )}
    </Section>
  );
}
