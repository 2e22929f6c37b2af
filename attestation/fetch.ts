import http from "node:http";
import https from "node:https";
import { isIP } from "node:net";
import tls from "node:tls";
import type { Getter } from "./evidence";

const TIMEOUT_MS = 10_000;
const MAX_BYTES = 8 * 1024 * 1024;

/**
 * GETs documents under `baseUrl` with node's HTTP client. With `insecure`, an https server's
 * certificate is not validated: the evidence authenticates itself (quote, checksums), and the TLS
 * check compares the live certificate with the evidence one.
 */
export function httpGetter(baseUrl: string, insecure = false): Getter {
  const base = baseUrl.replace(/\/+$/, "");
  return (path) =>
    new Promise((resolve, reject) => {
      const url = new URL(base + path);
      const client = url.protocol === "https:" ? https : http;
      const req = client.get(url, { timeout: TIMEOUT_MS, rejectUnauthorized: !insecure }, (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on("data", (c: Buffer) => {
          size += c.length;
          if (size > MAX_BYTES) req.destroy(new Error(`GET ${path}: larger than ${MAX_BYTES} bytes`));
          else chunks.push(c);
        });
        res.on("end", () =>
          res.statusCode === 200 ? resolve(Buffer.concat(chunks)) : reject(new Error(`GET ${path}: HTTP ${res.statusCode}`)),
        );
        res.on("error", reject);
      });
      req.on("timeout", () => req.destroy(new Error(`GET ${path}: no answer within ${TIMEOUT_MS} ms`)));
      req.on("error", (err) => reject(err.message.startsWith("GET ") ? err : new Error(`GET ${path}: ${err.message}`)));
    });
}

/** The DER bytes of the leaf certificate an https server presents (not validated: it is compared, not trusted). */
export function liveLeafCertificate(url: URL): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const host = url.hostname.replace(/^\[|\]$/g, "");
    const socket = tls.connect({
      host,
      port: Number(url.port || 443),
      servername: isIP(host) ? undefined : host,
      rejectUnauthorized: false,
      timeout: TIMEOUT_MS,
    });
    socket.once("secureConnect", () => {
      const cert = socket.getPeerCertificate();
      socket.end();
      if (cert?.raw) resolve(cert.raw);
      else reject(new Error("the server presented no certificate"));
    });
    socket.once("timeout", () => socket.destroy(new Error(`no TLS handshake within ${TIMEOUT_MS} ms`)));
    socket.once("error", reject);
  });
}
