import os from "node:os";
import path from "node:path";
import fs from "node:fs";
import crypto from "node:crypto";
import type { AddressInfo } from "node:net";
import type { Server } from "node:http";
import express from "express";
import pino from "pino";
import { computeCid } from "../../executor/cid";
import { loadTriggersConfig } from "../../triggers/config";
import { startTriggers, type RunningTriggers, type TriggersOptions } from "../../triggers/server";
import { dropTempDatabase } from "./postgres";

export type Harness = {
  dataDir: string;
  env: Record<string, string>;
  links: string[];
  svc: RunningTriggers;
  start: (opts?: TriggersOptions) => Promise<RunningTriggers>;
  stop: () => Promise<void>;
};

/**
 * The triggers service in-process on a free port, with a temp data dir, a captured mailer and a
 * driven clock; its store on SQLite in the data dir, or on PostgreSQL when `env` has DATABASE_URL
 * (storeEnv in helpers/postgres gives each harness a fresh database, dropped by `stop`).
 */
export async function startHarness(env: Record<string, string>, opts: TriggersOptions = {}): Promise<Harness> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "vesta-triggers-"));
  const h: Harness = {
    dataDir,
    env: {
      VESTA_MODE: "development", // production wants the public https URL (its own test: test/deploy.config.test.ts)
      TRIGGERS_PORT: "0",
      TRIGGERS_DATA_DIR: dataDir,
      TRIGGERS_QUEUE_POLL_MS: "20",
      TRIGGERS_RETRY_BASE_MS: "5",
      TRIGGERS_LOG_LEVEL: "silent",
      TRIGGERS_HEARTBEAT_MS: "200", // on PostgreSQL, runs of a killed process are failed within a second or so
      // tests sign in many times from one address: the login mail limits have their own test
      TRIGGERS_LOGIN_RATE_PER_ADDRESS: "1000",
      TRIGGERS_LOGIN_RATE_PER_IP: "1000",
      ...env,
    },
    links: [],
    svc: undefined as unknown as RunningTriggers,
    start: async (o = {}) => {
      h.svc = await startTriggers(loadTriggersConfig(h.env), {
        logger: pino({ level: process.env.VESTA_TEST_LOG_LEVEL ?? "silent" }),
        mailer: (_e, link) => void h.links.push(link),
        ...opts,
        ...o,
      });
      return h.svc;
    },
    stop: async () => {
      await h.svc?.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
      await dropTempDatabase(h.env.DATABASE_URL); // a database of its own (storeEnv): dropped with it
    },
  };
  await h.start();
  return h;
}

export type Reply<T = any> = { status: number; body: T; headers: Headers };

export async function http<T = any>(url: string, init: { method?: string; token?: string; body?: unknown; raw?: string; headers?: Record<string, string> } = {}): Promise<Reply<T>> {
  const headers: Record<string, string> = { ...init.headers };
  if (init.token) headers.authorization = `Bearer ${init.token}`;
  if (init.body !== undefined) headers["content-type"] ??= "application/json";
  const res = await fetch(url, { method: init.method ?? "GET", headers, body: init.raw ?? (init.body === undefined ? undefined : JSON.stringify(init.body)), redirect: "manual" });
  const text = await res.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    /* text */
  }
  return { status: res.status, body: body as T, headers: res.headers };
}

/** The whole browser handshake: magic-link login, then approval of the token's challenge. Answers the approved token. */
export async function approvedToken(h: Harness, email = "alice@example.com"): Promise<string> {
  const n = h.links.length;
  return approvedTokenAt(h.svc.url, email, async () => h.links[n]);
}

/** approvedToken against the service at `base`; `linkAfterLogin` answers the sign-in link mailed by the login it follows. */
export async function approvedTokenAt(base: string, email: string, linkAfterLogin: () => Promise<string>): Promise<string> {
  const token = crypto.randomBytes(32).toString("base64url");
  const challenge = crypto.createHash("sha256").update(token).digest("base64url");
  const authorize = `/authorize?challenge=${challenge}&name=test`;
  const first = await http(`${base}${authorize}`);
  if (first.status !== 303) throw new Error(`authorize without session: ${first.status}`);
  await http(`${base}/auth/login`, { method: "POST", raw: new URLSearchParams({ email, next: authorize }).toString(), headers: { "content-type": "application/x-www-form-urlencoded" } });
  const link = await linkAfterLogin();
  const magic = await http(link);
  const cookie = magic.headers.get("set-cookie")!.split(";")[0];
  const pageRes = await http(`${base}${magic.headers.get("location")}`, { headers: { cookie } });
  const field = (name: string) => new RegExp(`name="${name}" value="([^"]+)"`).exec(pageRes.body as string)![1];
  const ok = await http(`${base}/authorize`, {
    method: "POST",
    raw: new URLSearchParams({ challenge, name: "test", ticket: field("ticket"), csrf: field("csrf") }).toString(),
    headers: { cookie, "content-type": "application/x-www-form-urlencoded" },
  });
  if (ok.status !== 200) throw new Error(`approve: ${ok.status} ${JSON.stringify(ok.body)}`);
  return token;
}

/** A session cookie of the triggers service at `h` for `email` (magic-link login over HTTP). */
export async function signedIn(h: Harness, email: string): Promise<string> {
  const n = h.links.length;
  await http(`${h.svc.url}/auth/login`, { method: "POST", raw: new URLSearchParams({ email }).toString(), headers: { "content-type": "application/x-www-form-urlencoded" } });
  const magic = await http(h.links[n]);
  return magic.headers.get("set-cookie")!.split(";")[0];
}

/** The dashboard link ("Approve in the dashboard") of the approval page of `challenge` and `name`, as the service renders it for a signed-in user. */
export async function dashboardApprovalLink(h: Harness, cookie: string, challenge: string, name: string): Promise<string> {
  const page = await http<string>(`${h.svc.url}/authorize?challenge=${challenge}&name=${encodeURIComponent(name)}`, { headers: { cookie } });
  const href = /<a href="([^"]+)">Approve in the dashboard<\/a>/.exec(page.body)?.[1];
  if (!href) throw new Error(`no dashboard link on the approval page: ${page.status} ${page.body}`);
  return href.replaceAll("&#38;", "&");
}

/** Polls `fn` until it answers truthy (or throws after `ms`). */
export async function until<T>(fn: () => Promise<T | undefined | false>, ms = 20_000, what = "condition"): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

type Answer = { status: number; body: unknown };
/** The real core's answer for a usage key permitted to execute the action. */
export const permitted = async (_key: string, body: { code?: string; ipfs_id?: string }): Promise<Answer> => ({
  status: 200,
  body: { key_kind: "usage", ipfs_id: body.code === undefined ? body.ipfs_id : await computeCid(body.code), can_execute: true },
});

/**
 * A tiny stand-in for the core service: /core/v1/lit_action answers as `reply` decides (calls are
 * recorded), /core/v1/check_execute_permission as `permit` decides (default: every key is a usage
 * key permitted to execute the action; checks are recorded apart).
 */
export async function fakeCore(reply: (body: any, n: number) => Promise<Answer> | Answer, permit: (key: string, body: any) => Promise<Answer> | Answer = permitted) {
  const calls: { key: string; body: any }[] = [];
  const checks: { key: string; body: any }[] = [];
  const app = express();
  app.post("/core/v1/check_execute_permission", express.json({ limit: "5mb" }), async (req, res) => {
    checks.push({ key: String(req.headers["x-api-key"]), body: req.body });
    const r = await permit(String(req.headers["x-api-key"]), req.body);
    res.status(r.status).json(r.body);
  });
  app.post("/core/v1/lit_action", express.json({ limit: "5mb" }), async (req, res) => {
    calls.push({ key: String(req.headers["x-api-key"]), body: req.body });
    const r = await reply(req.body, calls.length);
    res.status(r.status).json(r.body);
  });
  const server: Server = await new Promise((resolve) => {
    const s = app.listen(0, "127.0.0.1", () => resolve(s));
  });
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    calls,
    checks,
    close: () => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))),
  };
}

/**
 * A stand-in chain JSON-RPC that counts its calls: its head is `head` (settable), chain id 1, no
 * logs. For tests of how a chain-event trigger is saved, not of what a chain sends (those use Hardhat).
 */
export async function fakeChain(head: number) {
  const calls: string[] = [];
  const chain = { head, calls, url: "", close: async () => {} };
  const app = express();
  app.post("/", express.json(), (req, res) => {
    const one = (r: { id: unknown; method: string }) => {
      calls.push(r.method);
      const result = r.method === "eth_chainId" ? "0x1" : r.method === "eth_blockNumber" ? `0x${chain.head.toString(16)}` : r.method === "eth_getLogs" ? [] : null;
      return { jsonrpc: "2.0", id: r.id, result };
    };
    res.json(Array.isArray(req.body) ? req.body.map(one) : one(req.body));
  });
  const server: Server = await new Promise((resolve) => {
    const s = app.listen(0, "127.0.0.1", () => resolve(s));
  });
  chain.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  chain.close = () => new Promise<void>((r) => (server.closeAllConnections(), server.close(() => r())));
  return chain;
}
