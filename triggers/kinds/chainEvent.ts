import { EventFragment, getAddress, isHexString, type Log } from "ethers";
import { z } from "zod";
import { badRequest } from "../../protocol/errors";
import { text } from "../../protocol/textSchema";
import { tolerantInterface } from "../../protocol/abiText";
import { rpcProvider } from "../../protocol/rpc";
import { chainUnavailable } from "../../protocol/chainErrors";
import { CHAINS } from "../config";
import { newId } from "../crypto";
import type { TriggersCtx } from "../context";
import type { TriggerRow } from "../store/types";

const topic = text({ kind: "label", maxChars: 66 }).refine((t) => isHexString(t, 32), "each topic must be a 32-byte hex string");

export const ChainEventConfig = z.strictObject({
  chain: z.enum(CHAINS, { message: `chain must be one of ${CHAINS.join(", ")}` }),
  contract_address: text({ kind: "label", maxChars: 128 }),
  event_signature: text({ kind: "label", min: 3, maxChars: 1000 }),
  start_block: z.union([z.number().int().min(0), text({ kind: "label", maxChars: 80 }).regex(/^(0x[0-9a-fA-F]+|\d+)$/, "start_block must be an integer or a hex string")]).optional(),
  topic_filters: z.array(z.union([topic, z.array(topic).min(1), z.null()])).max(3, "topic_filters takes at most 3 entries after topic0").optional(),
  confirmations: z.number().int().min(0).max(1000).optional(),
});
export type ChainEventConfig = z.output<typeof ChainEventConfig>;

export function fragmentOf(signature: string): EventFragment {
  try {
    return EventFragment.from(signature.startsWith("event ") ? signature : `event ${signature}`);
  } catch (err) {
    throw badRequest(`config.event_signature is not an event signature: ${(err as Error).message}`);
  }
}

/** Checks the config and answers it normalized (checksummed address, start_block as a number) and the first block to scan. */
export async function prepareChainEvent(ctx: TriggersCtx, c: ChainEventConfig): Promise<{ config: ChainEventConfig; state: Record<string, unknown> }> {
  const provider = ctx.providers[c.chain];
  if (!provider) throw badRequest(`config.chain: ${c.chain} has no RPC configured on this deployment (set TRIGGERS_RPC_${c.chain.toUpperCase()})`);
  let address: string;
  try {
    address = getAddress(c.contract_address);
  } catch {
    throw badRequest("config.contract_address is not an address");
  }
  const fragment = fragmentOf(c.event_signature);
  const start = c.start_block === undefined ? undefined : BigInt(c.start_block);
  let head: number;
  try {
    head = await provider.getBlockNumber();
  } catch (err) {
    ctx.logger.warn({ chain: c.chain, err: (err as Error).message }, "chain-event trigger: the RPC did not answer");
    throw chainUnavailable(`the ${c.chain} RPC node did not answer; nothing was saved, try again`);
  }
  // A backfill costs RPC for every block it walks: bounded (a start_block in the future simply waits).
  if (start !== undefined && BigInt(head) - start > BigInt(ctx.config.maxBackfillBlocks)) {
    throw badRequest(`config.start_block ${start} is ${BigInt(head) - start} blocks behind the head of ${c.chain}; a trigger may backfill at most ${ctx.config.maxBackfillBlocks} blocks`);
  }
  const next = start === undefined ? head + 1 : Number(start);
  return {
    config: { ...c, contract_address: address, event_signature: fragment.format("full").replace(/^event /, ""), ...(start !== undefined ? { start_block: Number(start) } : {}) },
    state: { next_block: next },
  };
}

const plain = (v: unknown): unknown =>
  typeof v === "bigint" ? v.toString() : Array.isArray(v) ? v.map(plain) : v && typeof v === "object" && "toArray" in (v as object) ? plain((v as any).toArray()) : v;

/** Decodes a log into arg0, arg1, ...; when the signature marks nothing indexed, the first (topics-1) inputs are taken as indexed. */
function decode(fragment: EventFragment, log: Log): Record<string, unknown> {
  let f = fragment;
  const marked = f.inputs.some((i) => i.indexed);
  if (!marked && log.topics.length > 1) {
    const n = log.topics.length - 1;
    f = EventFragment.from(`event ${f.name}(${f.inputs.map((p, i) => `${p.format("full")}${i < n ? " indexed" : ""}`).join(", ")})`);
  }
  try {
    const values = tolerantInterface([f]).decodeEventLog(f, log.data, log.topics); // a string that is not UTF-8 reads as U+FFFD
    return Object.fromEntries(f.inputs.map((_, i) => [`arg${i}`, plain(values[i])]));
  } catch {
    return {};
  }
}

/** The head of each chain, read once per scan whatever the number of triggers on it. */
type Heads = (chain: ChainEventConfig["chain"]) => Promise<number>;

/** One scan of one trigger: logs from the cursor up to the confirmed head, enqueued with the cursor advance in one transaction. */
async function scanOne(ctx: TriggersCtx, t: TriggerRow, heads: Heads): Promise<number> {
  const c = t.config as ChainEventConfig;
  const provider = ctx.providers[c.chain];
  if (!provider) return 0;
  const confirmations = c.confirmations ?? ctx.config.confirmations;
  const safe = (await heads(c.chain)) - confirmations;
  const from = Number(t.state.next_block);
  if (from > safe) return 0;
  const to = Math.min(safe, from + ctx.config.chainMaxRange - 1);
  const fragment = fragmentOf(c.event_signature);
  const logs = await provider.getLogs({
    address: c.contract_address,
    topics: [fragment.topicHash, ...(c.topic_filters ?? [])],
    fromBlock: from,
    toBlock: to,
  });
  const runs = logs.map((log) => ({
    id: newId("run"),
    dedupeKey: `log:${log.blockHash}:${log.index}`,
    params: {
      ...t.defaultParams,
      event: {
        decoded: decode(fragment, log),
        log: { address: log.address, data: log.data, topics: log.topics, block_hash: log.blockHash, log_index: log.index },
        transaction_hash: log.transactionHash,
        block_number: log.blockNumber,
        topics: log.topics,
        chain: c.chain,
      },
    },
  }));
  const ids = await ctx.store.enqueue(t.id, runs, ctx.now(), { ...t.state, next_block: to + 1 });
  return ids.length;
}

export async function scanChains(ctx: TriggersCtx): Promise<number> {
  let n = 0;
  const read = new Map<string, Promise<number>>();
  const heads: Heads = (chain) => {
    let head = read.get(chain);
    if (!head) read.set(chain, (head = ctx.providers[chain]!.getBlockNumber()));
    return head;
  };
  for (const t of await ctx.store.listEnabled("chain_event")) {
    try {
      n += await scanOne(ctx, t, heads);
    } catch (err) {
      ctx.logger.warn({ trigger: t.id, err: (err as Error).message }, "chain scan failed; retrying at the next poll");
    }
  }
  if (n) ctx.wake();
  return n;
}

export const providersFor = (rpc: Partial<Record<string, string>>, timeoutMs = 15_000) =>
  Object.fromEntries(Object.entries(rpc).map(([k, url]) => [k, rpcProvider(url!, timeoutMs, { polling: false })]));
