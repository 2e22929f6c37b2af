import { z, token } from "./common";

/** A base64url field of a WebAuthn response, at most `max` characters. */
const b64u = (what: string, max: number) => z.string().max(max, `${what} is longer than ${max} characters`).regex(/^[A-Za-z0-9_-]*$/, `${what} must be base64url`);
const base = {
  id: b64u("id", 1400).min(1),
  rawId: b64u("rawId", 1400).min(1),
  type: z.literal("public-key"),
  authenticatorAttachment: z.enum(["platform", "cross-platform"]).optional(),
  clientExtensionResults: z.record(z.string().max(64), z.unknown()).default({}),
};

/** What navigator.credentials.create answers, as @simplewebauthn/browser's startRegistration returns it. */
export const RegistrationResponse = z
  .object({
    ...base,
    response: z.object({
      clientDataJSON: b64u("response.clientDataJSON", 4096).min(1),
      attestationObject: b64u("response.attestationObject", 32_768).min(1),
      transports: z.array(token(32, "transport")).max(10).optional(),
      authenticatorData: b64u("response.authenticatorData", 32_768).optional(),
      publicKey: b64u("response.publicKey", 4096).optional(),
      publicKeyAlgorithm: z.number().int().optional(),
    }),
  })
  .openapi("PasskeyRegistrationResponse", { description: "The registration response (navigator.credentials.create, as @simplewebauthn/browser's startRegistration returns it)." });

/** What navigator.credentials.get answers, as @simplewebauthn/browser's startAuthentication returns it. */
export const AuthenticationResponse = z
  .object({
    ...base,
    response: z.object({
      clientDataJSON: b64u("response.clientDataJSON", 4096).min(1),
      authenticatorData: b64u("response.authenticatorData", 32_768).min(1),
      signature: b64u("response.signature", 1024).min(1),
      userHandle: b64u("response.userHandle", 128).optional(),
    }),
  })
  .openapi("PasskeyAuthenticationResponse", { description: "The assertion (navigator.credentials.get, as @simplewebauthn/browser's startAuthentication returns it)." });

/** Options for the browser (PublicKeyCredentialCreationOptionsJSON or ...RequestOptionsJSON), passed to @simplewebauthn/browser as they are. */
export const WebAuthnOptions = z.record(z.string(), z.unknown()).openapi("WebAuthnOptions");
