import dns from "node:dns";
import dnsPromises from "node:dns/promises";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { buildConnector } from "undici";
import type { Connector, ResolvedAddress, Resolver } from "../../executor/sandbox/host/egress";

/** An HTTP server on 127.0.0.1 that counts the TCP connections it accepts. */
export async function countingServer(handler: http.RequestListener) {
  const server = http.createServer(handler);
  const state = { connections: 0, port: 0, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
  server.on("connection", () => state.connections++);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  state.port = (server.address() as AddressInfo).port;
  return state;
}

/**
 * A double of the internet for the egress connector: `routes` maps a public IP literal to the port
 * of a local server standing in for it; a loopback address is connected for real (so a connector
 * that let one through reaches the local "victim"); anything else is unreachable. Every attempt is
 * recorded with the server name TLS would verify.
 */
export function fakeInternet(routes: Record<string, number>) {
  const real = buildConnector({});
  const attempts: { hostname: string; port: string; servername?: string }[] = [];
  const network: Connector = (target, callback) => {
    attempts.push({ hostname: target.hostname, port: String(target.port), servername: target.servername });
    const port = routes[target.hostname];
    if (port !== undefined) return real({ ...target, hostname: "127.0.0.1", port: String(port) }, callback);
    if (/^127\.|^::1$|^::ffff:127\./.test(target.hostname)) return real(target, callback);
    callback(Object.assign(new Error(`connect ENETUNREACH ${target.hostname} (test network)`), { code: "ENETUNREACH" }), null);
  };
  return { network, attempts };
}

/**
 * A DNS double: `answers(name, n)` gives the n-th answer (1-based) for `name`. It is the injected
 * resolver and, while `install()`ed, also node:dns `lookup` (callback and promise forms), so any
 * code path that resolves a name a second time (instead of connecting to what it checked) meets
 * the later answer. No real DNS is asked.
 */
export function stubResolver(answers: (hostname: string, n: number) => ResolvedAddress[]) {
  const counts = new Map<string, number>();
  const answer = (hostname: string) => {
    const n = (counts.get(hostname) ?? 0) + 1;
    counts.set(hostname, n);
    return answers(hostname, n).map((a) => ({ address: a.address, family: a.family ?? (a.address.includes(":") ? 6 : 4) }));
  };
  const resolve: Resolver = async (hostname) => answer(hostname);
  const saved = { lookup: dns.lookup, promises: dnsPromises.lookup };
  const callbackLookup = (hostname: string, options: unknown, callback?: (...args: unknown[]) => void) => {
    const cb = (typeof options === "function" ? options : callback) as (...args: unknown[]) => void;
    const all = typeof options === "object" && options !== null && (options as { all?: boolean }).all;
    const list = answer(hostname);
    process.nextTick(() => (list.length === 0 ? cb(Object.assign(new Error(`ENOTFOUND ${hostname}`), { code: "ENOTFOUND" })) : all ? cb(null, list) : cb(null, list[0].address, list[0].family)));
  };
  return {
    resolve,
    lookups: (hostname: string) => counts.get(hostname) ?? 0,
    install() {
      (dns as { lookup: unknown }).lookup = callbackLookup;
      (dnsPromises as { lookup: unknown }).lookup = async (hostname: string, options?: { all?: boolean }) => {
        const list = answer(hostname);
        if (list.length === 0) throw Object.assign(new Error(`ENOTFOUND ${hostname}`), { code: "ENOTFOUND" });
        return options?.all ? list : list[0];
      };
    },
    uninstall() {
      (dns as { lookup: unknown }).lookup = saved.lookup;
      (dnsPromises as { lookup: unknown }).lookup = saved.promises;
    },
  };
}

/**
 * An HTTP server on 127.0.0.1 that holds every request until `open()`: an action that fetches it
 * holds its sandbox until the test lets it go (no timing). `arrived` counts the held requests;
 * `paths` lists every request's path in the order they came (the order the actions fetched it).
 */
export async function gateServer() {
  const held: http.ServerResponse[] = [];
  const paths: string[] = [];
  let opened = false;
  const server = http.createServer((req, res) => {
    paths.push(req.url ?? "");
    if (opened) res.end("open");
    else held.push(res);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
    get arrived() {
      return held.length;
    },
    paths,
    open() {
      opened = true;
      for (const res of held.splice(0)) res.end("open");
    },
    close() {
      this.open();
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
