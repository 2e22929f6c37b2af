import crypto from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import Stripe from "stripe";

/**
 * A test double of the Stripe HTTP endpoints Vesta uses, on 127.0.0.1, for the official SDK
 * (pointed at it with host/port/protocol "http"): customers (create, retrieve, search by metadata),
 * customer balance transactions (create, list), payment intents (create, retrieve, update
 * metadata), with Stripe's idempotency keys (a repeated key replays the first answer; the same key
 * with other parameters is an error) and its error shape. Test helpers mark an intent succeeded,
 * sign webhook deliveries with the SDK's generateTestHeaderString, and make the next matching
 * request fail: applied but never answered (a crash or a lost answer), or refused unapplied (503).
 */

type Obj = Record<string, any>;
type Answer = { status: number; body: Obj };
type Fault = { method: string; path: RegExp; mode: "hang" | "drop" | "unavailable" };

const SECRET_KEY = "sk_test_vesta_double";
const PUBLISHABLE_KEY = "pk_test_vesta_double";
const WEBHOOK_SECRET = "whsec_vesta_double";

const newId = (prefix: string) => `${prefix}_${crypto.randomBytes(12).toString("hex")}`;
const seconds = () => Math.floor(Date.now() / 1000);
const fail = (status: number, type: string, message: string, code?: string): Answer => ({ status, body: { error: { type, message, ...(code ? { code } : {}) } } });
const missing = (what: string, id: string) => fail(404, "invalid_request_error", `No such ${what}: '${id}'`, "resource_missing");

/** Form encoding as the SDK sends it (`a[b][c]=v`, `a[0]=v`) into nested objects. */
function parseForm(text: string): Obj {
  const out: Obj = {};
  for (const [key, value] of new URLSearchParams(text)) {
    const path = key.split(/[[\]]+/).filter(Boolean);
    let node = out;
    for (const part of path.slice(0, -1)) node = node[part] ??= {};
    node[path[path.length - 1]] = value;
  }
  return out;
}

export type StripeDouble = Awaited<ReturnType<typeof startStripeDouble>>;

export async function startStripeDouble() {
  const customers = new Map<string, Obj>();
  const transactions: Obj[] = []; // every customer balance transaction, oldest first
  const intents = new Map<string, Obj>();
  const idempotent = new Map<string, { params: string; answer: Answer }>();
  const requests: { method: string; path: string; idempotencyKey?: string; replayed: boolean }[] = [];
  const faults: Fault[] = [];
  const hanging = new Set<http.ServerResponse>();

  const customerById = (id: string) => customers.get(id);

  function handle(method: string, url: URL, params: Obj): Answer {
    const p = url.pathname;
    let m: RegExpMatchArray | null;
    if (method === "POST" && p === "/v1/customers") {
      const c = { id: newId("cus"), object: "customer", balance: 0, currency: null, created: seconds(), description: params.description ?? null, metadata: params.metadata ?? {} };
      customers.set(c.id, c);
      return { status: 200, body: c };
    }
    if (method === "GET" && p === "/v1/customers/search") {
      const q = url.searchParams.get("query") ?? "";
      const parsed = q.match(/^metadata\['([^']+)'\]:'([^']*)'$/);
      if (!parsed) return fail(400, "invalid_request_error", `the double only searches metadata['key']:'value', not ${q}`);
      const data = [...customers.values()].filter((c) => c.metadata[parsed[1]] === parsed[2]);
      return { status: 200, body: { object: "search_result", url: p, has_more: false, next_page: null, data } };
    }
    if ((m = p.match(/^\/v1\/customers\/(cus_\w+)$/)) && method === "GET") {
      const c = customerById(m[1]);
      return c ? { status: 200, body: c } : missing("customer", m[1]);
    }
    if ((m = p.match(/^\/v1\/customers\/([^/]+)\/balance_transactions$/))) {
      const c = customerById(m[1]);
      if (!c) return missing("customer", m[1]);
      if (method === "POST") {
        const amount = Number(params.amount);
        if (!Number.isInteger(amount) || amount === 0) return fail(400, "invalid_request_error", "amount must be a non-zero integer", "parameter_invalid_integer");
        if (c.currency && params.currency !== c.currency) return fail(400, "invalid_request_error", `the customer's currency is ${c.currency}`);
        c.currency = params.currency;
        c.balance += amount;
        const t = { id: newId("cbtxn"), object: "customer_balance_transaction", amount, currency: c.currency, customer: c.id, created: seconds(), description: params.description ?? null, ending_balance: c.balance, metadata: params.metadata ?? {}, type: "adjustment" };
        transactions.push(t);
        return { status: 200, body: t };
      }
      const all = transactions.filter((t) => t.customer === c.id).reverse(); // newest first
      const after = url.searchParams.get("starting_after");
      const from = after ? all.findIndex((t) => t.id === after) + 1 : 0;
      const limit = Number(url.searchParams.get("limit") ?? 10);
      return { status: 200, body: { object: "list", url: p, data: all.slice(from, from + limit), has_more: from + limit < all.length } };
    }
    if (method === "POST" && p === "/v1/payment_intents") {
      const amount = Number(params.amount);
      if (!Number.isInteger(amount) || amount < 50) return fail(400, "invalid_request_error", "amount must be at least 50 cents", "amount_too_small");
      if (params.customer && !customerById(params.customer)) return missing("customer", params.customer);
      const id = newId("pi");
      const pi = { id, object: "payment_intent", amount, amount_received: 0, currency: params.currency, customer: params.customer ?? null, metadata: params.metadata ?? {}, status: "requires_payment_method", client_secret: `${id}_secret_${crypto.randomBytes(8).toString("hex")}`, created: seconds() };
      intents.set(id, pi);
      return { status: 200, body: pi };
    }
    if ((m = p.match(/^\/v1\/payment_intents\/([^/]+)$/))) {
      const pi = intents.get(m[1]);
      if (!pi) return missing("payment_intent", m[1]);
      if (method === "POST") pi.metadata = { ...pi.metadata, ...params.metadata };
      return { status: 200, body: pi };
    }
    return fail(404, "invalid_request_error", `Unrecognized request URL (${method}: ${p}).`);
  }

  const server = http.createServer((req, res) => {
    let text = "";
    req.on("data", (chunk) => (text += chunk));
    req.on("end", () => {
      const url = new URL(req.url ?? "/", "http://double");
      const method = req.method ?? "GET";
      const key = method === "POST" ? (req.headers["idempotency-key"] as string | undefined) : undefined;
      const faultAt = (modes: Fault["mode"][]) => faults.findIndex((f) => f.method === method && f.path.test(url.pathname) && modes.includes(f.mode));
      const send = (a: Answer, replayed = false) => {
        requests.push({ method, path: url.pathname, idempotencyKey: key, replayed });
        const fault = faultAt(["hang", "drop"]);
        if (fault >= 0 && !replayed) {
          const [{ mode }] = faults.splice(fault, 1);
          if (mode === "drop") return req.socket.destroy(); // applied, the answer lost
          return void hanging.add(res); // applied, no answer ever
        }
        res.writeHead(a.status, { "content-type": "application/json", "request-id": newId("req"), ...(replayed ? { "idempotent-replayed": "true" } : {}) });
        res.end(JSON.stringify(a.body));
      };
      if (req.headers.authorization !== `Bearer ${SECRET_KEY}`) return send(fail(401, "invalid_request_error", "Invalid API Key provided"));
      const refused = faultAt(["unavailable"]);
      if (refused >= 0) {
        faults.splice(refused, 1);
        requests.push({ method, path: url.pathname, idempotencyKey: key, replayed: false });
        res.writeHead(503, { "content-type": "application/json", "stripe-should-retry": "false" });
        return void res.end(JSON.stringify(fail(503, "api_error", "the double is unavailable (test fault)").body));
      }
      const seen = key ? idempotent.get(key) : undefined;
      if (seen) {
        if (seen.params !== text) return send(fail(400, "idempotency_error", "Keys for idempotent requests can only be used with the same parameters they were first used with."));
        return send(seen.answer, true);
      }
      const answer = handle(method, url, method === "POST" ? parseForm(text) : {});
      if (key) idempotent.set(key, { params: text, answer });
      send(answer);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  const stripe = new Stripe(SECRET_KEY);

  return {
    port,
    secretKey: SECRET_KEY,
    publishableKey: PUBLISHABLE_KEY,
    webhookSecret: WEBHOOK_SECRET,
    customers,
    transactions,
    intents,
    requests,
    /** The relayer environment that runs billing in Stripe mode against this double. */
    env: (): Record<string, string> => ({
      VESTA_BILLING: "stripe",
      STRIPE_SECRET_KEY: SECRET_KEY,
      STRIPE_PUBLISHABLE_KEY: PUBLISHABLE_KEY,
      STRIPE_WEBHOOK_SECRET: WEBHOOK_SECRET,
      STRIPE_API_HOST: "127.0.0.1",
      STRIPE_API_PORT: String(port),
      STRIPE_API_PROTOCOL: "http",
    }),
    /** The customer record whose metadata names `payer` (e.g. "account:0x..."). */
    customerOf: (payer: string) => [...customers.values()].find((c) => c.metadata.vesta_payer === payer),
    /** The customer's balance transactions, oldest first. */
    transactionsOf: (customerId: string) => transactions.filter((t) => t.customer === customerId),
    /** The customer pays: its intent succeeds, as Stripe.js would have it after a card payment. */
    succeed(id: string) {
      const pi = intents.get(id);
      if (!pi) throw new Error(`no payment intent ${id}`);
      Object.assign(pi, { status: "succeeded", amount_received: pi.amount });
      return pi;
    },
    /** A webhook delivery of `type` about `object`, signed with the webhook secret: body and Stripe-Signature header. */
    webhook(type: string, object: Obj, secret = WEBHOOK_SECRET) {
      const payload = JSON.stringify({ id: newId("evt"), object: "event", api_version: Stripe.API_VERSION, created: seconds(), type, data: { object }, livemode: false, pending_webhooks: 1 });
      return { payload, signature: stripe.webhooks.generateTestHeaderString({ payload, secret }) };
    },
    /** The next `method` request to a path matching `path` is applied, then never answered ("hang") or its connection dropped ("drop"); or refused with 503, unapplied ("unavailable"). */
    failNext(method: "GET" | "POST", path: RegExp, mode: Fault["mode"]) {
      faults.push({ method, path, mode });
    },
    close: async () => {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
