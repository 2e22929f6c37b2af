import type { OpenAPIRegistry } from "@asteasolutions/zod-to-openapi";
import type { Router } from "express";
import { CID } from "multiformats/cid";
import { z } from "../schemas/common";
import { actionCid } from "../schemas/cid";
import { route } from "../http/route";
import { AppError, notFound } from "../errors";
import type { Ctx } from "../context";

/**
 * The media type stored code is served as. Not text/javascript on purpose: this origin also serves
 * the dashboard, whose Content-Security-Policy allows scripts of 'self'; as text/plain with nosniff,
 * a browser never runs what anyone stored here as a script of this origin.
 */
export const ACTION_CODE_TYPE = "text/plain; charset=utf-8";

const Query = z.object({ ipfs_id: actionCid }).strict();

/** The store's key of a CID: the service computes CIDv0, so a CIDv1 of the same dag-pb SHA2-256 names it as its v0. */
const storedForm = (cid: string) => CID.parse(cid).toV0().toString();

export function actionCodeRoutes(router: Router, registry: OpenAPIRegistry, ctx: Ctx) {
  route(router, registry, ctx, {
    method: "get",
    path: "/get_action_code",
    tag: "Actions",
    summary:
      "The code stored under a CID: the exact bytes that hash to it, as text/plain UTF-8 (actions are public by CID, as on IPFS; no key needed). Immutable, so cached for good (ETag: the CID). Rate limited per client (VESTA_ACTION_CODE_RATE_LIMIT a minute); at most the code limit.",
    auth: "none",
    query: Query,
    errors: ["action_code_not_found", "code_too_large", "rate_limited"],
    response: z.string().openapi({ description: "The action's source.", example: "async function main(params) { return params; }" }),
    responseType: "text/plain",
    handler: async ({ query, req, res }) => {
      const cid = storedForm(query.ipfs_id);
      const code = await ctx.executor.codes.get(cid); // checked against its CID before it is served
      if (!code) throw notFound("action_code_not_found", `no code is stored for ${query.ipfs_id}`);
      const max = ctx.config.limits.maxCodeBytes;
      if (code.byteLength > max) throw new AppError(413, "code_too_large", `the code stored for ${query.ipfs_id} is larger than this node serves (${max} bytes, VESTA_ACTION_MAX_CODE_BYTES)`);
      res.set({
        "Content-Type": ACTION_CODE_TYPE,
        "X-Content-Type-Options": "nosniff",
        "Content-Security-Policy": "default-src 'none'; sandbox",
        "Cache-Control": "public, max-age=31536000, immutable",
        ETag: `"${cid}"`,
      });
      if (req.fresh) return void res.status(304).end();
      res.send(Buffer.from(code.buffer, code.byteOffset, code.byteLength));
    },
  });
}
