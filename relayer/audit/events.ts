/**
 * An account's administrative history, read from the AccountConfig contract's events: every event
 * of the account carries its hash as its first indexed topic, so one log filter finds them all.
 * Newest first, a page at a time: the cursor is the position ("block:logIndex") of the last entry
 * answered, and the next page starts before it. Who: the key that acted (the events' actorKeyHash,
 * where the event has one) and the address that sent the transaction (the service's payer for a
 * managed account, the admin wallet when it writes itself). When: the block's time.
 */
import type { Log } from "ethers";
import { hex32 } from "../../protocol/usageKeyShape";
import type { Chain } from "../chain/client";

export type AuditEntry = {
  event: string;
  args: Record<string, string | boolean>;
  actor_key_hash: string | null;
  sender: string;
  tx_hash: string;
  block_number: number;
  log_index: number;
  time: string;
};
export type AuditPage = { events: AuditEntry[]; next_cursor: string | null };

/** Blocks one log query spans (public RPC nodes cap a range near 10,000). */
const WINDOW = 10_000;
/** Windows one page may scan before it answers what it found (the next page goes on from there). */
const MAX_WINDOWS = 50;

const position = (l: { blockNumber: number; index: number }) => `${l.blockNumber}:${l.index}`;
const before = (l: Log, cursor?: { block: number; index: number }) => !cursor || l.blockNumber < cursor.block || (l.blockNumber === cursor.block && l.index < cursor.index);

/** A value as the page shows it: hashes as 0x + 64 hex, numbers as decimal strings. */
function shown(name: string, v: unknown): string | boolean {
  if (typeof v === "boolean") return v;
  if (typeof v === "bigint") return /hash/i.test(name) ? hex32(v) : v.toString();
  return String(v);
}

/**
 * The page of `accountHash`'s events before `cursor` (newest first), at most `limit`, scanning from
 * block `fromBlock` (the contract's deployment, or 0).
 */
export async function auditPage(chain: Chain, accountHash: bigint, opts: { limit: number; cursor?: { block: number; index: number }; fromBlock: number }): Promise<AuditPage> {
  const contract = chain.accountConfig;
  const address = await contract.getAddress();
  const topic = hex32(accountHash);
  // A cursor past the head (made up, or from a chain that was reset) scans from the head: no range past it is asked for.
  const head = await chain.provider.getBlockNumber();
  let to = opts.cursor ? Math.min(opts.cursor.block, head) : head;
  const found: Log[] = [];
  let windows = 0;
  while (to >= opts.fromBlock && found.length < opts.limit && windows < MAX_WINDOWS) {
    const from = Math.max(opts.fromBlock, to - WINDOW + 1);
    const logs = await chain.provider.getLogs({ address, topics: [null, topic], fromBlock: from, toBlock: to });
    found.push(...logs.filter((l) => before(l, opts.cursor)).sort((a, b) => b.blockNumber - a.blockNumber || b.index - a.index));
    to = from - 1;
    windows++;
  }
  const page = found.slice(0, opts.limit);
  const times = new Map<number, string>();
  const senders = new Map<string, string>();
  const events: AuditEntry[] = [];
  for (const l of page) {
    const parsed = contract.interface.parseLog(l);
    if (!parsed) continue;
    if (!times.has(l.blockNumber)) times.set(l.blockNumber, new Date(Number((await chain.provider.getBlock(l.blockNumber))!.timestamp) * 1000).toISOString());
    if (!senders.has(l.transactionHash)) senders.set(l.transactionHash, (await chain.provider.getTransaction(l.transactionHash))!.from);
    const args: Record<string, string | boolean> = {};
    parsed.fragment.inputs.forEach((input, i) => {
      if (input.name !== "apiKeyHash" && input.name !== "actorKeyHash") args[input.name] = shown(input.name, parsed.args[i]);
    });
    const actor = parsed.fragment.inputs.findIndex((i) => i.name === "actorKeyHash");
    events.push({
      event: parsed.name,
      args,
      actor_key_hash: actor >= 0 ? hex32(parsed.args[actor] as bigint) : null,
      sender: senders.get(l.transactionHash)!,
      tx_hash: l.transactionHash,
      block_number: l.blockNumber,
      log_index: l.index,
      time: times.get(l.blockNumber)!,
    });
  }
  // More before this page: it was cut at the limit, or the scan stopped before the first block (its bound on
  // windows: a page with nothing found yet goes on from the block where the scan stopped).
  const exhausted = to < opts.fromBlock;
  const next = found.length > opts.limit || (!exhausted && page.length > 0) ? position(page[page.length - 1]) : !exhausted ? `${to + 1}:0` : null;
  return { events, next_cursor: next };
}
