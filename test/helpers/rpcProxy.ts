import http from "node:http";
import type { AddressInfo } from "node:net";

/**
 * What the proxy does with one JSON-RPC request instead of forwarding it: cut the connection before
 * forwarding ("reset") or after the node answered ("reset-after-forward"), never answer ("hang"),
 * answer HTTP 429, an HTML error page, or the JSON-RPC error a busy node gives (-32005).
 */
export type RpcFault = "reset" | "reset-after-forward" | "hang" | "429" | "garbage" | "busy";

export type RpcProxy = {
  url: string;
  /** Chooses a fault per request (undefined: forward it). */
  fault: (method: string, params: unknown[]) => RpcFault | undefined;
  /** Requests seen, by method. */
  seen: string[];
  /** Stops listening: every connection is then refused, as by a node that is down. */
  down: () => Promise<void>;
  /** Listens again on the same port. */
  up: () => Promise<void>;
  close: () => Promise<void>;
};

/** A JSON-RPC proxy in front of `target` (single requests, not batches) that injects faults on demand. */
export async function rpcProxy(target: string): Promise<RpcProxy> {
  const hanging = new Set<http.ServerResponse>();
  const server = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = Buffer.concat(chunks).toString("utf8");
    const { id, method, params } = JSON.parse(body) as { id: unknown; method: string; params: unknown[] };
    proxy.seen.push(method);
    const fault = proxy.fault(method, params ?? []);
    if (fault === "reset") return void req.socket.destroy();
    if (fault === "hang") return void hanging.add(res);
    if (fault === "429") return void res.writeHead(429, { "content-type": "text/plain" }).end("Too Many Requests");
    if (fault === "garbage") return void res.writeHead(200, { "content-type": "text/html" }).end("<html><body>Bad Gateway</body></html>");
    if (fault === "busy") return void res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ jsonrpc: "2.0", id, error: { code: -32005, message: "limit exceeded" } }));
    const answer = await fetch(target, { method: "POST", headers: { "content-type": "application/json" }, body });
    const text = await answer.text();
    if (fault === "reset-after-forward") return void req.socket.destroy();
    res.writeHead(answer.status, { "content-type": "application/json" }).end(text);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  const stop = () =>
    new Promise<void>((resolve) => {
      for (const res of hanging) res.destroy();
      hanging.clear();
      server.closeAllConnections();
      server.close(() => resolve());
    });
  const proxy: RpcProxy = {
    url: `http://127.0.0.1:${port}`,
    fault: () => undefined,
    seen: [],
    down: stop,
    up: () => new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve)),
    close: () => (server.listening ? stop() : Promise.resolve()),
  };
  return proxy;
}
