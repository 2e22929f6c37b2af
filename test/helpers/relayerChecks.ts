import { expect } from "chai";
import type { Express } from "express";
import { ethers } from "hardhat";
import { hashOf } from "./accountConfig";
import { accountState, plain, WHOLE } from "./scenario";
import { call, startStack, type Reply, type Stack } from "./relayer";
import { ERROR_CODES, isErrorCode } from "../../protocol/errors";
import { hotRoutePaths } from "../../relayer/app";

/** Valid raw IPFS CIDs (v0 and v1). */
export const CID_V0 = "QmPZ9gcCEpqKTo6aq61g2nXGUhM4iCL3ewB6LDXZCtioEB";
export const CID_V1 = "bafybeigdyrzt5sfp7udm7hu76uh7y26nf3efuylqabf3oclgtqy55fbzdi";

/** Counts what the relayer asks the chain (JSON-RPC methods) and the key provider (paths) while `fn` runs. */
export async function costOf(stack: Stack, fn: () => Promise<unknown>) {
  const provider = stack.relayer.ctx.chain.provider;
  const keys = stack.relayer.ctx.keys as { deriveSecret: (path: string) => Promise<Uint8Array> };
  const rpc: string[] = [];
  const derived: string[] = [];
  const send = provider.send.bind(provider);
  const derive = keys.deriveSecret.bind(keys);
  provider.send = async (method: string, params: any[]) => (rpc.push(method), send(method, params));
  keys.deriveSecret = async (path: string) => (derived.push(path), derive(path));
  try {
    await fn();
  } finally {
    provider.send = send;
    keys.deriveSecret = derive;
  }
  return { rpc, derived };
}

/**
 * Starts a stack before the tests of the enclosing suite and stops it after them (no loadFixture in
 * files that use it); returns the running stack's getter.
 */
export function suiteStack(opts: Parameters<typeof startStack>[0] = {}): () => Stack {
  let stack: Stack | undefined;
  before(async () => {
    stack = await startStack(opts);
  });
  after(async () => stack?.stop());
  return () => stack!;
}

/** Text that only a leaked stack trace or source path would put in an answer. */
const LEAKS = [/\n\s*at /, /\bat [\w.<>]+ \(/, /node_modules/, /\.ts:\d+/, /\.js:\d+/, /\/work\//, /\/home\//];

/**
 * Expects the one JSON error body of the API, `{error, code, message}` (plus optional `details`):
 * `error` the human message (what Chipotle's SDK shows), `message` the same text, `code` a stable
 * code of the catalogue with this status; no stack trace or file path.
 */
export function expectErrorBody(reply: Reply) {
  const where = `answer ${reply.status} ${JSON.stringify(reply.body)}`;
  expect(reply.status, where).to.be.at.least(400);
  expect(reply.body, where).to.be.an("object").that.is.not.null;
  expect(Object.keys(reply.body), where).to.satisfy((keys: string[]) => keys.every((k) => ["details", "error", "code", "message"].includes(k)));
  expect(reply.body.code, where).to.be.a("string").that.matches(/^[a-z_]+$/);
  const code: string = reply.body.code;
  expect(isErrorCode(code) && ERROR_CODES[code].status, `${where}: the catalogue's status of ${code}`).to.equal(reply.status);
  expect(reply.body.message, where).to.be.a("string").that.is.not.empty;
  expect(reply.body.error, where).to.equal(reply.body.message);
  expectNoLeak(reply);
}

/** expectErrorBody, with `status`, error `code` and a message that mentions each of `mentions`. */
export function expectError(reply: Reply, status: number, code: string, ...mentions: string[]) {
  const where = `answer ${reply.status} ${JSON.stringify(reply.body)}`;
  expect(reply.status, where).to.equal(status);
  expectErrorBody(reply);
  expect(reply.body.code, where).to.equal(code);
  for (const m of mentions) expect(reply.body.message, where).to.include(m);
}

/** Expects an answer without stack trace or file path. */
export function expectNoLeak(reply: Reply) {
  const text = typeof reply.body === "string" ? reply.body : JSON.stringify(reply.body);
  for (const leak of LEAKS) expect(text, `leaks internals: ${text.slice(0, 300)}`).not.to.match(leak);
}

/** The relayer's payer addresses, from its configuration. */
export const payerAddresses = (stack: Stack): string[] => stack.relayerConfig.payerKeys.map((k) => new ethers.Wallet(k).address);

/** Each payer's transaction count (its next nonce) as the chain has it. */
export const payerNonces = (stack: Stack): Promise<number[]> =>
  Promise.all(payerAddresses(stack).map((a) => ethers.provider.getTransactionCount(a)));

/** The chain as far as a request could touch it: block height, payer nonces and all that the account holds. */
export async function chainState(stack: Stack, apiKey?: string) {
  return {
    block: await ethers.provider.getBlockNumber(),
    nonces: await payerNonces(stack),
    account: apiKey === undefined ? null : await accountState(stack.config, hashOf(apiKey)),
  };
}

/** Runs `fn` and expects no transaction and no change to the account of `apiKey` meanwhile. */
export async function expectNothingChanged<T>(stack: Stack, apiKey: string | undefined, fn: () => Promise<T>): Promise<T> {
  const before = await chainState(stack, apiKey);
  const result = await fn();
  expect(await chainState(stack, apiKey), "the chain changed").to.deep.equal(before);
  return result;
}

/** Sends a request with any HTTP method (`call` types only GET and POST). */
export const send = (stack: Stack, method: string, path: string, opts: Parameters<typeof call>[3] = {}) =>
  call(stack, method as "GET", path, opts);

/** Expects `reply` to be a 200, naming the request on failure, and returns its body. */
export function ok<T = any>(reply: Reply<T>, what: string): T {
  expect(reply.status, `${what}: ${JSON.stringify(reply.body)}`).to.equal(200);
  return reply.body;
}

/** Creates a group through the API and returns its id. */
export async function apiGroup(stack: Stack, key: string, groupName = "group", extra: Record<string, unknown> = {}): Promise<number> {
  return Number(ok(await call(stack, "POST", "/add_group", { key, body: { group_name: groupName, ...extra } }), "add_group").group_id);
}

/** Creates a wallet (PKP) through the API and returns its address. */
export async function apiWallet(stack: Stack, key: string): Promise<string> {
  return ok(await call(stack, "POST", "/create_wallet", { key, body: {} }), "create_wallet").wallet_address;
}

/** The account's groups as the contract lists them (id, name, description, member counts). */
export async function chainGroups(stack: Stack, apiKey: string) {
  const [items] = await stack.config.listGroups(hashOf(apiKey), 0, WHOLE);
  return plain(items) as { id: bigint; name: string; description: string; pkpCount: bigint; cidCount: bigint }[];
}

type Layer = { route?: { path: string; methods: Record<string, boolean> }; handle?: { stack?: Layer[] } };

/** The routes an express app built by relayer/app.ts serves (`/core/v1/...` → sorted methods), read from its router. */
export function servedRoutes(app: Express): Record<string, string[]> {
  const routes: Record<string, string[]> = {};
  const walk = (layers: Layer[], prefix: string) => {
    for (const l of layers) {
      if (l.route) routes[prefix + l.route.path] = [...new Set([...(routes[prefix + l.route.path] ?? []), ...Object.keys(l.route.methods)])].sort();
      else if (l.handle?.stack) walk(l.handle.stack, "/core/v1"); // the one sub-router, mounted at /core/v1
    }
  };
  walk((app as unknown as { router: { stack: Layer[] } }).router.stack, "");
  // The run and CID routes are dispatched ahead of express's router (relayer/app.ts hotRoutes).
  for (const p of hotRoutePaths(app)) routes[p] = [...new Set([...(routes[p] ?? []), "post"])].sort();
  // The API's routes only: the dashboard and the attestation files are served beside it.
  return Object.fromEntries(Object.entries(routes).filter(([p]) => p.startsWith("/core/v1/")));
}
