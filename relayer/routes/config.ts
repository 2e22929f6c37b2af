import type { OpenAPIRegistry } from "@asteasolutions/zod-to-openapi";
import type { Router } from "express";
import { z } from "../schemas/common";
import { route } from "../http/route";
import type { Ctx } from "../context";

const CHAIN_NAMES: Record<string, string> = { "1": "ethereum", "8453": "base", "84532": "base-sepolia", "31337": "local" };

export function configRoutes(router: Router, registry: OpenAPIRegistry, ctx: Ctx) {
  route(router, registry, ctx, {
    method: "get",
    path: "/get_node_chain_config",
    tag: "Configuration",
    summary: "Chain configuration: chain id and the AccountConfig contract address.",
    auth: "none",
    response: z.object({
      chain_name: z.string(),
      chain_id: z.number().int(),
      is_evm: z.boolean(),
      testnet: z.boolean(),
      token: z.string(),
      contract_address: z.string(),
    }),
    handler: async () => {
      const id = ctx.chain.chainId.toString();
      return {
        chain_name: CHAIN_NAMES[id] ?? `chain-${id}`,
        chain_id: Number(ctx.chain.chainId),
        is_evm: true,
        testnet: id !== "1" && id !== "8453",
        token: "ETH",
        contract_address: ctx.config.accountConfigAddress,
      };
    },
  });

  route(router, registry, ctx, {
    method: "get",
    path: "/get_api_payers",
    tag: "Configuration",
    summary: "The API payer addresses that relay writes for managed accounts.",
    auth: "none",
    response: z.array(z.string()),
    handler: async () => ctx.chain.accountConfig.getApiPayers(),
  });

  route(router, registry, ctx, {
    method: "get",
    path: "/get_admin_api_payer",
    tag: "Configuration",
    summary: "The admin API payer address.",
    auth: "none",
    response: z.string(),
    handler: async () => ctx.chain.accountConfig.getAdminApiPayer(),
  });
}
