/**
 * npm start's JSON-RPC port: Hardhat's JSON-RPC handler (HTTP and WebSocket, the answers and
 * errors every client knows) over the chain as the port serves it (./portProvider.ts), behind the
 * checks of ./portPolicy.ts: a request from a web page's origin, or of a body type a page may send
 * without a preflight, is refused before its body is read; CORS names the accepted origin only.
 * (Hardhat's own server answers every origin with `Access-Control-Allow-Origin: *` and serves
 * every method, hardhat_setStorageAt included: a page could rewrite the contracts.)
 */
import type http from "node:http";
import type { EIP1193Provider } from "hardhat/types";
import { JsonRpcHandler } from "hardhat/internal/hardhat-network/jsonrpc/handler";
import { JsonRpcServer } from "hardhat/internal/hardhat-network/jsonrpc/server";
import { isJsonContentType, originAllowed } from "./portPolicy";
import { PortProvider } from "./portProvider";

export type ChainServer = { listen: () => Promise<{ address: string; port: number }>; close: () => Promise<void> };

/** Refuses a request with a JSON-RPC error body (the request is not read). */
function refuse(res: http.ServerResponse, status: number, message: string, headers: Record<string, string> = {}): void {
  res.writeHead(status, { "content-type": "application/json", connection: "close", ...headers });
  res.end(JSON.stringify({ jsonrpc: "2.0", id: null, error: { code: -32600, message } }));
}

/** What this file changes of Hardhat's server (its fields are private in its types). */
type HardhatServerParts = {
  _httpServer: http.Server;
  _wsServer: { options: { verifyClient: ((info: { req: http.IncomingMessage }) => boolean) | null } };
};

export function createChainServer(opts: { hostname: string; port: number; chain: EIP1193Provider; allowedOrigins: ReadonlySet<string> }): ChainServer {
  const provider = new PortProvider(opts.chain);
  const server = new JsonRpcServer({ hostname: opts.hostname, port: opts.port, provider });
  const { _httpServer: httpServer, _wsServer: wsServer } = server as unknown as HardhatServerParts;
  const handler = new JsonRpcHandler(provider);
  // Hardhat's handler answers every origin (`*`): the listener below sets the headers instead.
  (handler as unknown as { _setCorsHeaders: (res: http.ServerResponse) => void })._setCorsHeaders = () => undefined;
  const allowed = (origin: string | undefined) => originAllowed(origin, opts.allowedOrigins);

  httpServer.removeAllListeners("request");
  httpServer.on("request", (req: http.IncomingMessage, res: http.ServerResponse) => {
    const origin = req.headers.origin;
    if (!allowed(origin)) {
      return refuse(res, 403, `requests from ${JSON.stringify(origin!.slice(0, 200))} may not use npm start's chain (a web page's origin; allow one with VESTA_CHAIN_ALLOWED_ORIGINS)`);
    }
    const cors: Record<string, string> = origin === undefined ? {} : { "access-control-allow-origin": origin, vary: "Origin" };
    if (req.method === "OPTIONS") {
      res.writeHead(204, { ...cors, "access-control-allow-methods": "POST", "access-control-allow-headers": "content-type", "access-control-max-age": "600" });
      return res.end();
    }
    if (req.method !== "POST") return refuse(res, 405, "JSON-RPC requests are POSTs", { allow: "POST, OPTIONS", ...cors });
    if (!isJsonContentType(req.headers["content-type"])) {
      return refuse(res, 415, "JSON-RPC requests are sent with Content-Type: application/json", cors);
    }
    for (const [k, v] of Object.entries(cors)) res.setHeader(k, v);
    void handler.handleHttp(req, res);
  });
  // A browser names the page's origin in every WebSocket handshake too (and no CORS applies to it).
  wsServer.options.verifyClient = (info) => allowed(info.req.headers.origin);

  return {
    listen: () =>
      new Promise((resolve, reject) => {
        httpServer.once("error", reject);
        void server.listen().then((address) => {
          httpServer.off("error", reject);
          resolve(address);
        });
      }),
    close: () => server.close(),
  };
}
