import http from "node:http";
import type { AddressInfo } from "node:net";
import { exportJWK, exportSPKI, generateKeyPair, SignJWT, type JWTPayload } from "jose";

export type LocalIssuer = {
  /** The issuer's `iss` (its loopback URL). */
  issuer: string;
  jwksUri: string;
  /** An ID token signed with the issuer's ES256 key (kid "es"), with these claims over the defaults (iss, aud, sub, iat, exp in 5 min). */
  token(claims: JWTPayload & { nonce?: string }, opts?: { kid?: string; key?: "es" | "rs" | "stranger" }): Promise<string>;
  /** The RSA public key (kid "rs") as PEM: what a key-confusion attacker HMACs with. */
  rsaPublicPem: string;
  /** JWKS requests served. */
  jwksHits(): number;
  /**
   * Its authorization endpoint (implicit flow, response_type=id_token): who it signs in as, and the
   * last request it answered (its parameters and the ID token it sent back to the redirect_uri).
   */
  authorize: { subject: string; last?: { params: Record<string, string>; token: string; location: string } };
  close(): Promise<void>;
};

/** A local OpenID issuer on loopback: keys made with jose, its JWKS at /jwks. */
export async function startIssuer(audience: string): Promise<LocalIssuer> {
  const es = await generateKeyPair("ES256", { extractable: true });
  const rs = await generateKeyPair("RS256", { extractable: true });
  const stranger = await generateKeyPair("ES256", { extractable: true }); // not in the JWKS
  const jwks = { keys: [{ ...(await exportJWK(es.publicKey)), kid: "es", alg: "ES256", use: "sig" }, { ...(await exportJWK(rs.publicKey)), kid: "rs", alg: "RS256", use: "sig" }] };
  let hits = 0;
  let base = "";
  const now = () => Math.floor(Date.now() / 1000);
  const authorize: LocalIssuer["authorize"] = { subject: "dash-user" };
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://issuer");
    if (url.pathname === "/.well-known/openid-configuration") {
      res.setHeader("content-type", "application/json");
      res.setHeader("access-control-allow-origin", "*"); // the dashboard reads it from its own origin
      res.end(JSON.stringify({ issuer: base, authorization_endpoint: `${base}/authorize`, jwks_uri: `${base}/jwks`, response_types_supported: ["id_token"] }));
    } else if (url.pathname === "/authorize") {
      const params = Object.fromEntries(url.searchParams);
      void new SignJWT({ iss: base, aud: params.client_id, sub: authorize.subject, iat: now(), exp: now() + 300, nonce: params.nonce })
        .setProtectedHeader({ alg: "ES256", kid: "es" })
        .sign(es.privateKey)
        .then((token) => {
          const location = `${params.redirect_uri}#${new URLSearchParams({ id_token: token, state: params.state ?? "" })}`;
          authorize.last = { params, token, location };
          res.writeHead(302, { location });
          res.end();
        });
    } else if (req.url === "/jwks") {
      hits++;
      res.setHeader("content-type", "application/json");
      res.end(JSON.stringify(jwks));
    } else {
      res.statusCode = 404;
      res.end();
    }
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    issuer: base,
    jwksUri: `${base}/jwks`,
    rsaPublicPem: await exportSPKI(rs.publicKey),
    jwksHits: () => hits,
    authorize,
    token: async (claims, opts = {}) => {
      const which = opts.key ?? "es";
      const key = which === "rs" ? rs.privateKey : which === "stranger" ? stranger.privateKey : es.privateKey;
      return new SignJWT({ iss: base, aud: audience, sub: "user-1", iat: now(), exp: now() + 300, ...claims })
        .setProtectedHeader({ alg: which === "rs" ? "RS256" : "ES256", kid: opts.kid ?? (which === "rs" ? "rs" : "es") })
        .sign(key);
    },
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}
