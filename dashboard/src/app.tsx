/** The dashboard shell: sign-in (key or wallet), navigation, and the views. */
import { useEffect, useState } from "preact/hooks";
import { unwrap } from "@client";
import { publicApi, serviceBase, WalletBackend, type Backend, type ChainInfo } from "./backend";
import { forgetSession, loadDashboardConfig, saveKey, savedKey, type DashboardConfig } from "./session";
import { Alert, Field, Form, messageOf, SecretReveal, Section, useAction, useLoad } from "./ui";
import { KeysView } from "./views/keys";
import { GroupsView, WalletsView } from "./views/resources";
import { ActionsView } from "./views/actions";
import { RunView } from "./views/run";
import { BillingView } from "./views/billing";
import { TriggersAuthorizeView } from "./views/triggers";
import { IdentitySignIn } from "./views/identitySignIn";
import { IdentityMethodsView } from "./views/identityMethods";
import { IdentityBackend, loginWithKeyOrSession } from "./identity";
import { lazy, Suspense } from "preact/compat";

// Loaded when opened: the cron and chain-filter helpers stay out of the first page.
const TriggersView = lazy(() => import("./views/triggersTab").then((m) => ({ default: m.TriggersView })));
import { RunsView } from "./views/runs";
import { UsageView } from "./views/usage";
import { AuditView } from "./views/audit";

const TABS = [
  ["account", "Account"],
  ["keys", "Usage keys"],
  ["wallets", "Wallets"],
  ["groups", "Groups"],
  ["actions", "Actions"],
  ["run", "Run"],
  ["runs", "Runs"],
  ["triggers", "Triggers"],
  ["usage", "Usage"],
  ["audit", "Audit log"],
] as const;

/** Tabs only the account key (or the admin wallet) can use. */
const OWNER_TABS = new Set<string>(["keys", "audit"]);

function useHash() {
  const [hash, setHash] = useState(window.location.hash);
  useEffect(() => {
    const on = () => setHash(window.location.hash);
    window.addEventListener("hashchange", on);
    return () => window.removeEventListener("hashchange", on);
  }, []);
  const [path, query = ""] = hash.replace(/^#\/?/, "").split("?");
  return { path, query: new URLSearchParams(query) };
}

async function chainInfo(config: DashboardConfig): Promise<ChainInfo> {
  const c = await unwrap(publicApi().GET("/core/v1/get_node_chain_config"));
  return { chainId: c.chain_id, contract: c.contract_address, domainName: config.eip712_domain_name };
}

function Welcome({ config, onIn }: { config: DashboardConfig; onIn: (b: Backend) => void }) {
  const act = useAction();
  const [accountName, setAccountName] = useState("");
  const [accountDescription, setAccountDescription] = useState("");
  const [email, setEmail] = useState("");
  const [created, setCreated] = useState<{ api_key: string; wallet_address: string }>();
  const [key, setKey] = useState("");
  const [walletAccount, setWalletAccount] = useState("");
  const [needsAccount, setNeedsAccount] = useState(false);
  const [walletName, setWalletName] = useState("my wallet-owned account");

  const create = () =>
    act.run(async () => {
      if (!accountName.trim()) throw new Error("give the account a name");
      setCreated(await unwrap(publicApi().POST("/core/v1/new_account", { body: { account_name: accountName.trim(), account_description: accountDescription, ...(email.trim() ? { email: email.trim() } : {}) } })));
    });
  const signIn = (k: string) =>
    act.run(async () => {
      const b = await loginWithKeyOrSession(k);
      saveKey(b.runKey);
      onIn(b);
    });
  const connect = (createIt: boolean) =>
    act.run(async () => {
      try {
        onIn(await WalletBackend.connect(await chainInfo(config), { accountHash: walletAccount, ...(createIt ? { create: { name: walletName, description: "created from the dashboard" } } : {}) }));
      } catch (err) {
        if (/has no wallet-owned account/.test(messageOf(err))) setNeedsAccount(true);
        throw err;
      }
    });

  if (created) {
    return (
      <Section title="Your account is ready">
        <p>
          Admin wallet <span class="mono">{created.wallet_address}</span>.
        </p>
        <SecretReveal title="Account key" secret={created.api_key} onDone={() => signIn(created.api_key)} doneLabel="I have stored it, continue" />
        <Alert error={act.error} />
      </Section>
    );
  }
  return (
    <div class="welcome">
      <Alert error={act.error} />
      <Section title="Create an account">
        <Form onSubmit={() => create()}>
          <Field label="Account name" name="account_name" value={accountName} onInput={setAccountName} required />
          <Field label="Description" name="account_description" value={accountDescription} onInput={setAccountDescription} />
          <Field label="E-mail (optional)" name="email" type="email" value={email} onInput={setEmail} />
          <button class="primary" disabled={act.busy}>Create account</button>
        </Form>
      </Section>
      <IdentitySignIn onIn={onIn} />
      <Section title="Sign in with a key">
        <Form onSubmit={() => signIn(key)}>
          <Field label="Account key or usage key" name="api_key" type="password" value={key} onInput={setKey} required />
          <button class="primary" disabled={act.busy}>Sign in</button>
        </Form>
      </Section>
      <Section title="Connect a wallet">
        <p class="hint">
          For wallet-owned (ChainSecured) accounts: your wallet signs an EIP-712 login, and sends your admin changes to the contract itself. An account converted or
          transferred to your wallet becomes yours when you connect and your wallet accepts it (a transaction you confirm).
        </p>
        <Field label="Account hash (only for a converted account; empty = the wallet's own)" name="wallet_account" value={walletAccount} onInput={setWalletAccount} />
        <button type="button" class="primary" disabled={act.busy} onClick={() => connect(false)}>
          Connect wallet
        </button>
        {needsAccount && (
          <div>
            <Field label="Name of the new wallet-owned account" name="wallet_account_name" value={walletName} onInput={setWalletName} />
            <button type="button" disabled={act.busy} onClick={() => connect(true)}>
              Create a wallet-owned account
            </button>
          </div>
        )}
      </Section>
    </div>
  );
}

/** A usage key signed in: which key, and what it may do (what the other tabs show and hide). */
function UsageKeySummary({ backend, k }: { backend: Backend; k: NonNullable<Backend["usageKey"]> }) {
  const groups = useLoad(() => backend.listGroups().catch(() => []));
  const groupList = (ids: number[]) =>
    ids.length === 0
      ? "none"
      : ids.includes(0)
        ? "all groups"
        : groups.data === undefined
          ? "…" // names not loaded yet: not "#1", which reads as a deleted group
          : ids.map((i) => groups.data?.find((g) => g.id === i)?.name ?? `#${i}`).join(", ");
  const yes = (b: boolean) => (b ? "yes" : "no");
  return (
    <div data-testid="usage-key-note">
      <dl>
        <dt>Usage key</dt>
        <dd data-testid="usage-key-name">{k.name || "(unnamed)"}</dd>
        {k.description && (
          <>
            <dt>Description</dt>
            <dd>{k.description}</dd>
          </>
        )}
        <dt>Expires</dt>
        <dd>{k.expiration === "0" ? "never" : new Date(Number(k.expiration) * 1000).toISOString().slice(0, 16).replace("T", " ") + " UTC"}</dd>
      </dl>
      <table class="list" data-testid="usage-key-permissions">
        <tbody>
          <tr><td>Run actions in</td><td>{groupList(k.execute_in_groups)}</td></tr>
          <tr><td>Create groups</td><td>{yes(k.can_create_groups)}</td></tr>
          <tr><td>Delete groups</td><td>{yes(k.can_delete_groups)}</td></tr>
          <tr><td>Create wallets</td><td>{yes(k.can_create_pkps)}</td></tr>
          <tr><td>Manage actions in</td><td>{groupList(k.manage_ipfs_ids_in_groups)}</td></tr>
          <tr><td>Add wallets to</td><td>{groupList(k.add_pkp_to_groups)}</td></tr>
          <tr><td>Remove wallets from</td><td>{groupList(k.remove_pkp_from_groups)}</td></tr>
        </tbody>
      </table>
      <p class="hint">
        The dashboard shows what this key may do; what it may not is hidden or disabled. Managing usage keys, actions' metadata and the audit log take the
        account key.
      </p>
    </div>
  );
}

function AccountView({ backend, config, onSession }: { backend: Backend; config: DashboardConfig; onSession: (next: IdentityBackend | undefined, why?: string) => void }) {
  return (
    <>
      <Section title="Account">
        <dl>
          <dt>Signed in with</dt>
          <dd data-testid="signed-in">{backend.kind === "wallet" ? "wallet (EIP-712 login)" : backend instanceof IdentityBackend ? `${backend.method} (identity-owned)` : backend.usageKey ? "usage key" : "API key"}</dd>
          <dt>{backend.kind === "wallet" ? "Account hash" : "Key hash"}</dt>
          <dd class="mono">{backend.accountHash}</dd>
        </dl>
        {backend.usageKey && <UsageKeySummary backend={backend} k={backend.usageKey} />}
      </Section>
      {backend instanceof IdentityBackend && <IdentityMethodsView backend={backend} onSession={onSession} />}
      <BillingView backend={backend} config={config} />
    </>
  );
}

export function App() {
  const { path, query } = useHash();
  const [config, setConfig] = useState<DashboardConfig>();
  const [backend, setBackend] = useState<Backend>();
  const [restoring, setRestoring] = useState(!!savedKey());
  const [error, setError] = useState<string>();
  const [restoreError, setRestoreError] = useState<string>();

  useEffect(() => {
    loadDashboardConfig().then(setConfig, (err) => setError(messageOf(err)));
    const k = savedKey();
    if (k)
      loginWithKeyOrSession(k)
        .then(setBackend, (err) => {
          forgetSession();
          setRestoreError(`your session could not be restored, sign in again: ${messageOf(err)}`);
        })
        .finally(() => setRestoring(false));
  }, []);

  const signOut = () => {
    forgetSession();
    setBackend(undefined);
    window.location.hash = "";
  };

  if (error) return <Alert error={error} />;
  if (!config || restoring) return <p>Loading…</p>;
  const view = path === "triggers/authorize" ? (
    // Keyed by the link: another link opened in this tab (only the #part changes) gets a fresh view, with nothing of the last one's.
    <TriggersAuthorizeView key={query.toString()} config={config} query={query} />
  ) : !backend ? (
    <>
      <Alert error={restoreError} />
      <Welcome config={config} onIn={(b) => ((window.location.hash = "#/account"), setRestoreError(undefined), setBackend(b))} />
    </>
  ) : path === "keys" ? (
    <KeysView backend={backend} config={config} />
  ) : path === "wallets" ? (
    <WalletsView backend={backend} />
  ) : path === "groups" ? (
    <GroupsView backend={backend} />
  ) : path === "actions" ? (
    <ActionsView key={query.get("cid") ?? ""} backend={backend} cid={query.get("cid") ?? undefined} />
  ) : path === "run" ? (
    <RunView key={query.get("cid") ?? ""} backend={backend} cid={query.get("cid") ?? undefined} />
  ) : path === "runs" ? (
    <RunsView backend={backend} />
  ) : path === "audit" ? (
    <AuditView backend={backend} config={config} />
  ) : path === "usage" ? (
    <UsageView backend={backend} />
  ) : path === "triggers" ? (
    <Suspense fallback={<p>Loading…</p>}>
      <TriggersView backend={backend} config={config} />
    </Suspense>
  ) : (
    <AccountView
      backend={backend}
      config={config}
      onSession={(next, why) => {
        if (next) return setBackend(next);
        forgetSession();
        setBackend(undefined);
        setRestoreError(why);
      }}
    />
  );
  return (
    <>
      <header>
        <h1>Vesta</h1>
        {backend && (
          <nav>
            {TABS.filter(([id]) => !(backend.usageKey && OWNER_TABS.has(id))).map(([id, label]) => (
              <a key={id} href={`#/${id}`} class={path === id || (!path && id === "account") ? "active" : ""}>
                {label}
              </a>
            ))}
          </nav>
        )}
        {backend && (
          <div class="who">
            <span>{backend.label}</span>
            <button type="button" onClick={signOut}>
              Sign out
            </button>
          </div>
        )}
      </header>
      <main key={path}>{view}</main>
      <footer>
        <a href={`${serviceBase()}/core/v1/swagger-ui/`} target="_blank" rel="noopener">
          API explorer
        </a>
        <a href={`${serviceBase()}/dashboard/README.md`} target="_blank" rel="noopener">
          Guides (README: quickstart, dashboard, triggers, limits)
        </a>
        {config.triggers_url && (
          <a href={`${config.triggers_url.replace(/\/+$/, "")}/SKILL.md`} target="_blank" rel="noopener">
            Triggers guide (SKILL.md)
          </a>
        )}
      </footer>
    </>
  );
}
