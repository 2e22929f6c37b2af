/**
 * Signing in (or linking) with an OpenID provider by redirect: the implicit flow, the ID token back
 * in the fragment. The tab keeps a random state and the node's nonce for the one request it started;
 * the answer is taken only when both are its own.
 */
import { oidcNonce } from "@client/identity";
import { publicApi, serviceBase } from "./backend";

/** What the tab went to the provider for: signing in, or linking the provider's subject to the signed-in identity. */
export type Intent = "sign-in" | "link";

/** The provider sign-in this tab started: its state, nonce and intent (sessionStorage: this tab only, gone with it). */
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
export function takeReturned(intent: Intent): { token: string } | { refused: string } | undefined {
  const params = new URLSearchParams(window.location.hash.replace(/^#/, ""));
  const token = params.get("id_token");
  const error = params.get("error");
  if (!token && !error) return undefined;
  const raw = sessionStorage.getItem(PENDING);
  let pending: { state?: unknown; nonce?: unknown; intent?: unknown } | undefined;
  try {
    pending = raw ? JSON.parse(raw) : undefined;
  } catch {
    pending = undefined;
  }
  if (pending && pending.intent !== intent && (pending.intent === "sign-in" || pending.intent === "link")) return undefined; // the other view's answer
  history.replaceState(null, "", window.location.pathname + window.location.search);
  sessionStorage.removeItem(PENDING);
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

/** Sends the browser to the provider's authorization endpoint (from its discovery document) with a fresh state and node nonce. */
export async function startProvider(issuer: string, clientId: string, intent: Intent): Promise<void> {
  const { nonce } = await oidcNonce(publicApi());
  const discovery = await (await fetch(`${issuer.replace(/\/+$/, "")}/.well-known/openid-configuration`)).json();
  if (typeof discovery.authorization_endpoint !== "string") throw new Error(`${issuer} publishes no authorization endpoint`);
  const state = random();
  sessionStorage.setItem(PENDING, JSON.stringify({ state, nonce, intent }));
  const url = new URL(discovery.authorization_endpoint);
  for (const [k, v] of Object.entries({ client_id: clientId, response_type: "id_token", scope: "openid email", redirect_uri: returnUrl(), nonce, state, response_mode: "fragment" })) url.searchParams.set(k, v);
  window.location.assign(url.toString());
}
