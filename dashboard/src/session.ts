/**
 * What the dashboard remembers. Secrets (the signed-in key, usage keys minted in this tab) live in
 * sessionStorage only: they are gone when the tab closes. Action code (not secret) is kept in
 * localStorage by CID, and the CID by its hash, so an action added here can be run by name later.
 */
import { serviceBase } from "./backend";

const KEY = "vesta.session.key";
const KNOWN = "vesta.session.usage_keys";
const CODE = "vesta.code.";
const CID = "vesta.cid.";

export const savedKey = () => sessionStorage.getItem(KEY) ?? undefined;
export const saveKey = (key: string | undefined) => (key ? sessionStorage.setItem(KEY, key) : sessionStorage.removeItem(KEY));

/** Usage keys this tab minted or was given, by hash (0x...): so edit and remove need no pasting. */
export function knownKeys() {
  const read = (): Record<string, string> => JSON.parse(sessionStorage.getItem(KNOWN) ?? "{}");
  const write = (m: Record<string, string>) => sessionStorage.setItem(KNOWN, JSON.stringify(m));
  return {
    get: (hash: string): string | undefined => read()[hash.toLowerCase()],
    set: (hash: string, key: string) => write({ ...read(), [hash.toLowerCase()]: key }),
    delete: (hash: string) => {
      const m = read();
      delete m[hash.toLowerCase()];
      write(m);
    },
  };
}

export const forgetSession = () => {
  sessionStorage.removeItem(KEY);
  sessionStorage.removeItem(KNOWN);
};

export const codeStore = {
  get: (cid: string) => localStorage.getItem(CODE + cid) ?? undefined,
  /** The CID behind a hashed CID (the lists name actions by hash), when this browser added the action. */
  cidOf: (hashed: string) => localStorage.getItem(CID + hashed.toLowerCase()) ?? undefined,
  set: (cid: string, hashed: string, code: string) => {
    localStorage.setItem(CODE + cid, code);
    localStorage.setItem(CID + hashed.toLowerCase(), cid);
  },
};

export type DashboardConfig = { triggers_url: string | null; explorer_url?: string | null; eip712_domain_name: string; billing: "off" | "local" | "stripe" };

/** The relayer's settings for the dashboard (served beside it). */
export async function loadDashboardConfig(): Promise<DashboardConfig> {
  const res = await fetch(`${serviceBase()}/dashboard/config.json`);
  if (!res.ok) throw new Error(`the dashboard settings could not be loaded (${res.status})`);
  return res.json();
}
