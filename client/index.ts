/**
 * The typed Vesta client. Its types come from the relayer's OpenAPI document
 * (client/generated/schema.ts, made by `npm run gen:client`); the runtime is openapi-fetch. Nothing
 * here names an endpoint or a field: a path or body the API does not have is a type error.
 *
 *   import { createVestaClient, unwrap } from "vesta/client";
 *   const vesta = createVestaClient({ baseUrl: "http://127.0.0.1:8000", apiKey: process.env.VESTA_API_KEY });
 *   const groups = await unwrap(vesta.GET("/core/v1/list_groups", { params: { query: { page_number: 0, page_size: 20 } } }));
 *
 * Used by the dashboard, the triggers service and the README's examples.
 */
import createClient, { type Client, type FetchResponse, type Middleware } from "openapi-fetch";
import type { components, paths } from "./generated/schema";

export type { components, paths } from "./generated/schema";
/** The API's named request and response bodies, e.g. `Schemas["AddGroupRequest"]`. */
export type Schemas = components["schemas"];
export type VestaClient = Client<paths>;

export type VestaClientOptions = {
  /** Where the service listens, without `/core/v1` (e.g. http://127.0.0.1:8000). */
  baseUrl: string;
  /** An account or usage key, sent as X-Api-Key. */
  apiKey?: string;
  /**
   * The X-Wallet-Auth header value for the billing routes of a wallet-owned account (base64 of
   * `{typed_data, signature, api_key_hash?}`, a BillingAuth signature), or a function making a fresh one.
   */
  walletAuth?: string | (() => string | Promise<string>);
  /** A fetch implementation (default: the global one). */
  fetch?: typeof fetch;
  /** Extra headers on every request. */
  headers?: Record<string, string>;
};

/** An answer other than 2xx, with the API's `{error, code, message}` body: `code` is the stable code, the message is `error`. */
export class VestaApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly body?: unknown,
  ) {
    super(message);
    this.name = "VestaApiError";
  }
}

/** A client for `baseUrl` that authenticates every request with `apiKey` and/or `walletAuth`. */
export function createVestaClient(opts: VestaClientOptions): VestaClient {
  const client = createClient<paths>({
    baseUrl: opts.baseUrl.replace(/\/+$/, "").replace(/\/core\/v1$/, ""),
    fetch: opts.fetch,
    headers: opts.headers,
  });
  const auth: Middleware = {
    async onRequest({ request }) {
      if (opts.apiKey && !request.headers.has("x-api-key")) request.headers.set("x-api-key", opts.apiKey);
      if (opts.walletAuth && !request.headers.has("x-wallet-auth")) {
        request.headers.set("x-wallet-auth", typeof opts.walletAuth === "function" ? await opts.walletAuth() : opts.walletAuth);
      }
      return request;
    },
  };
  client.use(auth);
  return client;
}

type AnyResponse = FetchResponse<any, any, any>;
type Data<R> = R extends { data?: infer D } ? Exclude<D, undefined> : never;

/**
 * The answer's body, or a VestaApiError carrying the API's error code and message (never a bare
 * status): `const { api_key } = await unwrap(vesta.POST("/core/v1/new_account", { body }))`.
 */
export async function unwrap<R extends AnyResponse>(call: Promise<R>): Promise<Data<R>> {
  let res: R;
  try {
    res = await call;
  } catch (err) {
    throw new VestaApiError(0, "unreachable", `the service could not be reached: ${(err as Error).message}`);
  }
  if (res.response.ok) return res.data as Data<R>;
  const body = res.error as { error?: unknown; code?: unknown; message?: unknown } | string | undefined;
  if (body && typeof body === "object" && typeof body.code === "string") {
    throw new VestaApiError(res.response.status, body.code, String(body.error ?? body.message ?? ""), body);
  }
  const text = typeof body === "string" && body ? body.slice(0, 500) : res.response.statusText;
  throw new VestaApiError(res.response.status, "http_error", `the service answered ${res.response.status}${text ? `: ${text}` : ""}`, body);
}
