import type { OpenAPIRegistry } from "@asteasolutions/zod-to-openapi";
import type { Router } from "express";
import { z } from "../schemas/common";
import { route } from "../http/route";
import type { Ctx } from "../context";
import pkg from "../../package.json";
import { chainName } from "../../protocol/chains";

/**
 * The configuration variables behind the run limits that get_lit_action_client_config shows (Chipotle
 * keeps such keys in its chain configuration; here they are the relayer's environment).
 */
export const RUN_LIMIT_KEYS = [
  "VESTA_ACTION_TIMEOUT_MS",
  "VESTA_ACTION_MEMORY_MB",
  "VESTA_ACTION_MAX_CODE_BYTES",
  "VESTA_ACTION_MAX_RESPONSE_BYTES",
  "VESTA_ACTION_MAX_LOG_BYTES",
  "VESTA_ACTION_MAX_FETCHES",
  "VESTA_ACTION_MAX_KEY_REQUESTS",
  "VESTA_ACTION_MAX_PARAMS_BYTES",
  "VESTA_ACTION_MAX_FETCH_BYTES",
  "VESTA_MAX_JSON_DEPTH",
] as const;

const int = (description: string) => z.number().int().openapi({ description });


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
        chain_name: chainName(ctx.chain.chainId),
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
    errors: ["chain_unavailable"],
    handler: async () => ctx.chain.accountConfig.getApiPayers(),
  });

  route(router, registry, ctx, {
    method: "get",
    path: "/get_admin_api_payer",
    tag: "Configuration",
    summary: "The admin API payer address.",
    auth: "none",
    response: z.string(),
    errors: ["chain_unavailable"],
    handler: async () => ctx.chain.accountConfig.getAdminApiPayer(),
  });
}

/** Chipotle's configuration routes: the service's version, the run limits, the configuration keys. */
export function versionRoutes(router: Router, registry: OpenAPIRegistry, ctx: Ctx) {
  route(router, registry, ctx, {
    method: "get",
    path: "/version",
    tag: "Configuration",
    summary: "The service's name, version and the commit it was built from (VESTA_COMMIT).",
    auth: "none",
    response: z
      .object({
        name: z.string(),
        version: z.string(),
        commit_version: z.string(),
        submodule_versions: z.array(z.tuple([z.string(), z.string()])).openapi({ description: "Always empty: Vesta has no submodules." }),
      })
      .openapi("VersionResponse"),
    handler: async () => ({ name: pkg.name, version: pkg.version, commit_version: ctx.config.commit, submodule_versions: [] as [string, string][] }),
  });

  route(router, registry, ctx, {
    method: "get",
    path: "/get_lit_action_client_config",
    tag: "Configuration",
    summary: "The limits every action run has, in Chipotle's field names (and Vesta's other limits beside them).",
    auth: "none",
    response: z
      .object({
        timeout_ms: int("Wall-clock deadline of a run (VESTA_ACTION_TIMEOUT_MS)."),
        async_timeout_ms: int("The same deadline: one clock covers synchronous and asynchronous work."),
        memory_limit_mb: int("Heap limit of a run (VESTA_ACTION_MEMORY_MB)."),
        max_code_length: int("Largest action code, bytes of UTF-8 (VESTA_ACTION_MAX_CODE_BYTES)."),
        max_response_length: int("Largest response, bytes of JSON (VESTA_ACTION_MAX_RESPONSE_BYTES)."),
        max_console_log_length: int("Largest total of logs, bytes (VESTA_ACTION_MAX_LOG_BYTES)."),
        max_fetch_count: int("Outbound fetches per run (VESTA_ACTION_MAX_FETCHES)."),
        max_get_keys_count: int("Key requests per run (VESTA_ACTION_MAX_KEY_REQUESTS)."),
        max_retries: int("Always 0: a run is never retried by the service."),
        client_timeout_ms_buffer: int("Always 0: the answer comes when the run ends, within timeout_ms."),
        max_params_length: int("Largest js_params, bytes of JSON (VESTA_ACTION_MAX_PARAMS_BYTES)."),
        max_fetch_response_length: int("Largest body of one fetch answer, bytes (VESTA_ACTION_MAX_FETCH_BYTES)."),
        max_json_depth: int("Deepest nesting of js_params and of the response (VESTA_MAX_JSON_DEPTH)."),
      })
      .openapi("LitActionClientConfigResponse"),
    handler: async () => {
      const l = ctx.config.limits;
      return {
        timeout_ms: l.timeoutMs,
        async_timeout_ms: l.timeoutMs,
        memory_limit_mb: Math.floor(l.memoryBytes / (1024 * 1024)),
        max_code_length: l.maxCodeBytes,
        max_response_length: l.maxResponseBytes,
        max_console_log_length: l.maxLogBytes,
        max_fetch_count: l.maxFetches,
        max_get_keys_count: l.maxKeyRequests,
        max_retries: 0,
        client_timeout_ms_buffer: 0,
        max_params_length: l.maxParamsBytes,
        max_fetch_response_length: l.maxFetchBytes,
        max_json_depth: l.maxJsonDepth,
      };
    },
  });

  route(router, registry, ctx, {
    method: "get",
    path: "/get_chain_config_keys",
    tag: "Configuration",
    summary: "The names of the configuration keys behind the run limits (environment variables of the relayer, not chain configuration).",
    auth: "none",
    response: z.object({ keys: z.array(z.string()) }).openapi("ChainConfigKeysResponse"),
    handler: async () => ({ keys: [...RUN_LIMIT_KEYS] }),
  });
}
