import type { OpenAPIRegistry } from "@asteasolutions/zod-to-openapi";
import type { Router } from "express";
import { z, name, description, groupId, paging } from "../schemas/common";
import { route } from "../http/route";
import { asOwner } from "../http/auth";
import { cachedRead, precheckRelayedWrite, relayWrite, WRITE_ERRORS } from "../chain/relay";
import { AppError } from "../errors";
import { deriveWallet, paths, randomDerivationPath } from "../../executor/keys/provider";
import { ListItem } from "./groups";
import type { Ctx } from "../context";

/** Scope.CreatePkps of contracts/types/AccountConfigTypes.sol. */
const SCOPE_CREATE_PKPS = 2;

const CreateWalletInput = z.object({ name: name.default(""), description: description.default("") }).strict().openapi("CreateWalletRequest");
const WalletItem = ListItem.extend({ wallet_address: z.string() }).openapi("WalletItem");

const toItem = (w: { walletAddress: string; name: string; description: string }) => ({
  id: w.walletAddress,
  name: w.name,
  description: w.description,
  wallet_address: w.walletAddress,
});

export function walletRoutes(router: Router, registry: OpenAPIRegistry, ctx: Ctx) {
  route(router, registry, ctx, {
    method: ["get", "post"],
    path: "/create_wallet",
    tag: "Wallets",
    summary: "Derives a new wallet (PKP) for the account and registers it on chain (pkp:create). Optional name/description.",
    auth: "key",
    body: CreateWalletInput,
    errors: WRITE_ERRORS,
    response: z.object({ wallet_address: z.string() }).openapi("CreateWalletResponse"),
    handler: async ({ auth, body }) => {
      // Refusals first, from what is cached (credit, the key's pkp:create): a key derivation is the costly part.
      await precheckRelayedWrite(ctx, "registerWalletDerivation", auth.keyHash);
      if (!auth.isAccountKey && !(await cachedRead(ctx, auth.accountHash, `hasScope:${auth.keyHash}:pkp`, (c) => c.hasScope(auth.keyHash, SCOPE_CREATE_PKPS, 0)))) {
        throw new AppError(403, "missing_scope", "this key lacks the pkp:create permission", { scope: "pkp:create" });
      }
      const derivationPath = randomDerivationPath();
      const { address } = await deriveWallet(ctx.keys, paths.pkp(auth.accountHash, derivationPath));
      await relayWrite(ctx, "registerWalletDerivation", [auth.keyHash, address, derivationPath, body.name, body.description], await asOwner(ctx, auth));
      return { wallet_address: address };
    },
  });

  route(router, registry, ctx, {
    method: "get",
    path: "/list_wallets",
    tag: "Wallets",
    summary: "The account's wallets (PKPs).",
    auth: "key",
    query: paging,
    response: z.array(WalletItem),
    handler: async ({ auth, query }) => {
      const [items] = await cachedRead(ctx, auth.accountHash, `listWallets:${query.page_number}:${query.page_size}`, (c) => c.listWallets(auth.accountHash, query.page_number, query.page_size));
      return items.map(toItem);
    },
  });

  route(router, registry, ctx, {
    method: "get",
    path: "/list_wallets_in_group",
    tag: "Wallets",
    summary: "The wallets in one group.",
    auth: "key",
    query: paging.extend({ group_id: groupId }),
    errors: ["group_not_found"],
    response: z.array(WalletItem),
    handler: async ({ auth, query }) => {
      const [items] = await cachedRead(ctx, auth.accountHash, `listWalletsInGroup:${query.group_id}:${query.page_number}:${query.page_size}`, (c) =>
        c.listWalletsInGroup(auth.accountHash, query.group_id, query.page_number, query.page_size),
      );
      return items.map(toItem);
    },
  });
}
