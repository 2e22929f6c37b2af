import { OpenAPIRegistry, OpenApiGeneratorV31 } from "@asteasolutions/zod-to-openapi";

export function newRegistry(): OpenAPIRegistry {
  const registry = new OpenAPIRegistry();
  registry.registerComponent("securitySchemes", "ApiKey", { type: "apiKey", in: "header", name: "X-Api-Key" });
  registry.registerComponent("securitySchemes", "Bearer", { type: "http", scheme: "bearer" });
  registry.registerComponent("securitySchemes", "WalletAuth", {
    type: "apiKey",
    in: "header",
    name: "X-Wallet-Auth",
    description: "Billing routes: base64 of JSON {typed_data, signature, api_key_hash?}, an EIP-712 BillingAuth signature of the account's admin wallet (spec 2).",
  });
  return registry;
}

/** The OpenAPI 3.1 document of everything registered (generated from the zod schemas that validate requests). */
export function openApiDocument(registry: OpenAPIRegistry, serverUrl?: string) {
  return new OpenApiGeneratorV31(registry.definitions).generateDocument({
    openapi: "3.1.0",
    info: {
      title: "Vesta core API",
      version: "1",
      description: "Accounts, usage keys, groups, wallets (PKPs) and actions. Authenticated endpoints take X-Api-Key or Authorization: Bearer.",
    },
    servers: serverUrl ? [{ url: serverUrl }] : [],
  });
}
