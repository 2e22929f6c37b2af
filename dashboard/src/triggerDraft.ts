/**
 * A trigger being written in the dashboard: what each field must be, checked as the user types (the
 * triggers service checks it all again), and the body it becomes. Pure: no DOM, no fetch.
 */
import { Cron } from "croner";
import cronstrue from "cronstrue";
import { EventFragment, isAddress, isHexString } from "ethers";
import { CHAINS } from "../../triggers/chains";
import type { Trigger, TriggerInput, TriggerKind } from "./triggersApi";

export { CHAINS };

export type Draft = {
  id?: string;
  name: string;
  kind: TriggerKind;
  code: string;
  params: string;
  /** The usage key's value; empty on edit = keep the trigger's key. */
  key: string;
  cron: string;
  chain: string;
  contract: string;
  event: string;
  topics: [string, string, string];
  startBlock: string;
  confirmations: string;
};

export const emptyDraft = (): Draft => ({
  name: "",
  kind: "webhook",
  code: "",
  params: "{}",
  key: "",
  cron: "*/5 * * * *",
  chain: CHAINS[0],
  contract: "",
  event: "",
  topics: ["", "", ""],
  startBlock: "",
  confirmations: "",
});

export function draftOf(t: Trigger): Draft {
  const c = t.config as { cron?: string; chain?: string; contract_address?: string; event_signature?: string; topic_filters?: (string | string[] | null)[]; start_block?: number; confirmations?: number };
  const topic = (i: number) => {
    const f = c.topic_filters?.[i];
    return f == null ? "" : Array.isArray(f) ? f.join(", ") : f;
  };
  return {
    ...emptyDraft(),
    id: t.id,
    name: t.name,
    kind: t.kind,
    code: t.action_code,
    params: JSON.stringify(t.default_params, null, 2),
    cron: c.cron ?? emptyDraft().cron,
    chain: c.chain ?? CHAINS[0],
    contract: c.contract_address ?? "",
    event: c.event_signature ?? "",
    topics: [topic(0), topic(1), topic(2)],
    startBlock: c.start_block === undefined ? "" : String(c.start_block),
    confirmations: c.confirmations === undefined ? "" : String(c.confirmations),
  };
}

/** A cron in words and its next firings (UTC, as the service runs it), or why it is not a cron. */
export function cronPreview(expr: string, count = 3): { words: string; next: Date[] } | { error: string } {
  const fields = expr.trim().split(/\s+/).filter(Boolean);
  if (fields.length !== 5 && fields.length !== 6) return { error: `a cron needs 5 fields (minute hour day month weekday), or 6 with seconds first; this has ${fields.length}` };
  try {
    const next = new Cron(expr.trim(), { paused: true, timezone: "UTC" }).nextRuns(count);
    if (next.length === 0) return { error: "this cron never fires" };
    return { words: `${cronstrue.toString(expr.trim(), { use24HourTimeFormat: true, verbose: false })} (UTC)`, next };
  } catch (err) {
    return { error: `not a cron: ${(err as Error).message}` };
  }
}

/** A topic filter field: empty = any; one topic; or several, comma-separated (any of them). */
function topicFilter(s: string): string | string[] | null {
  const parts = s.split(/[\s,]+/).filter(Boolean);
  return parts.length === 0 ? null : parts.length === 1 ? parts[0] : parts;
}

/** What is wrong with the draft, field by field (empty: it can be sent). */
export function problems(d: Draft, creating: boolean): Partial<Record<string, string>> {
  const p: Record<string, string> = {};
  if (!d.name.trim()) p.name = "give the trigger a name";
  if (!d.code.trim()) p.code = "pick an action, or paste its code";
  try {
    const v = JSON.parse(d.params || "{}");
    if (v === null || typeof v !== "object" || Array.isArray(v)) p.params = "default params must be a JSON object, like {}";
  } catch (err) {
    p.params = `default params are not JSON: ${(err as Error).message}`;
  }
  if (creating && !d.key.trim()) p.key = "choose the usage key the trigger runs with (paste its value if this browser does not know it)";
  if (d.kind === "schedule") {
    const c = cronPreview(d.cron);
    if ("error" in c) p.cron = c.error;
  }
  if (d.kind === "chain_event") {
    if (!isAddress(d.contract.trim())) p.contract = "the contract address is 0x and 40 hex digits";
    try {
      EventFragment.from(d.event.trim().startsWith("event ") ? d.event.trim() : `event ${d.event.trim()}`);
    } catch {
      p.event = "the event signature reads like Transfer(address indexed from, address indexed to, uint256 value)";
    }
    d.topics.forEach((t, i) => {
      const f = topicFilter(t);
      const all = f === null ? [] : Array.isArray(f) ? f : [f];
      if (all.some((x) => !isHexString(x, 32))) p[`topic${i + 1}`] = `topic ${i + 1}: each topic is 0x and 64 hex digits (several: separate them with commas)`;
    });
    if (d.startBlock.trim() && !/^(0x[0-9a-fA-F]+|\d+)$/.test(d.startBlock.trim())) p.startBlock = "the start block is a block number (decimal or 0x hex)";
    if (d.confirmations.trim() && !(/^\d+$/.test(d.confirmations.trim()) && Number(d.confirmations) <= 1000)) p.confirmations = "confirmations is a whole number from 0 to 1000";
  }
  return p;
}

/** The trigger's config, as the service takes it. */
export function configOf(d: Draft): Record<string, unknown> {
  if (d.kind === "schedule") return { cron: d.cron.trim() };
  if (d.kind === "webhook") return {};
  const topics = d.topics.map(topicFilter);
  while (topics.length && topics[topics.length - 1] === null) topics.pop();
  return {
    chain: d.chain,
    contract_address: d.contract.trim(),
    event_signature: d.event.trim(),
    ...(topics.length ? { topic_filters: topics } : {}),
    ...(d.startBlock.trim() ? { start_block: /^\d+$/.test(d.startBlock.trim()) ? Number(d.startBlock.trim()) : d.startBlock.trim() } : {}),
    ...(d.confirmations.trim() ? { confirmations: Number(d.confirmations.trim()) } : {}),
  };
}

/** The body of a create (every field) or of an edit (the key only when a new one was given). */
export function bodyOf(d: Draft): TriggerInput {
  return {
    name: d.name.trim(),
    kind: d.kind,
    action_code: d.code,
    default_params: JSON.parse(d.params || "{}"),
    config: configOf(d),
    ...(d.key.trim() ? { usage_api_key: d.key.trim() } : {}),
  };
}
