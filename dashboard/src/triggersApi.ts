/**
 * The triggers service, called from the dashboard: another origin, so its session cookie goes along
 * (credentials: "include") and it answers this dashboard's origin only (CORS). Writes send JSON, which
 * its CSRF guard requires of a cookie-authenticated call.
 */
export type TriggerKind = "webhook" | "schedule" | "chain_event";
export type Trigger = {
  id: string;
  name: string;
  kind: TriggerKind;
  enabled: boolean;
  usage_api_key_hash: string;
  action_code: string;
  default_params: Record<string, unknown>;
  config: Record<string, unknown>;
  webhook_url?: string;
  next_block?: number;
  created_at: string;
  updated_at: string;
};
export type TriggerRun = {
  id: string;
  trigger_id: string;
  status: "queued" | "running" | "success" | "failed";
  params: unknown;
  attempts: number;
  response: unknown;
  error: string | null;
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
};
export type TriggerInput = { name: string; kind: TriggerKind; action_code: string; default_params: Record<string, unknown>; usage_api_key?: string; config: Record<string, unknown>; enabled?: boolean };

export async function triggersCall<T>(base: string, path: string, init: { method?: string; body?: unknown } = {}): Promise<T> {
  const method = init.method ?? (init.body === undefined ? "GET" : "POST");
  let res: Response;
  try {
    res = await fetch(`${base}${path}`, {
      method,
      credentials: "include",
      headers: init.body === undefined ? {} : { "content-type": "application/json" },
      body: init.body === undefined ? undefined : JSON.stringify(init.body),
    });
  } catch (err) {
    throw new Error(`the triggers service at ${base} could not be reached (${(err as Error).message})`);
  }
  const text = await res.text();
  let parsed: any;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  if (!res.ok) throw Object.assign(new Error(parsed?.message ?? `the triggers service answered ${res.status}`), { status: res.status });
  return parsed as T;
}

/** The triggers API of one service, as the signed-in browser session. */
export const triggersApi = (base: string) => ({
  /** The session's user, or null when this browser is not signed in to the triggers service. */
  session: () => triggersCall<{ email: string }>(base, "/api/session").catch((err) => (err.status === 401 ? null : Promise.reject(err))),
  login: (email: string, next: string) => triggersCall(base, "/auth/login", { body: { email, next } }),
  list: () => triggersCall<Trigger[]>(base, "/api/triggers"),
  create: (t: TriggerInput) => triggersCall<Trigger>(base, "/api/triggers", { body: t }),
  update: (id: string, patch: Partial<TriggerInput>) => triggersCall<Trigger>(base, `/api/triggers/${encodeURIComponent(id)}`, { method: "PATCH", body: patch }),
  remove: (id: string) => triggersCall<{ success: true }>(base, `/api/triggers/${encodeURIComponent(id)}`, { method: "DELETE" }),
  runs: (id: string, limit = 20, offset = 0) => triggersCall<{ runs: TriggerRun[]; total: number }>(base, `/api/triggers/${encodeURIComponent(id)}/runs?limit=${limit}&offset=${offset}`),
});
export type TriggersApi = ReturnType<typeof triggersApi>;
