import { quoteSignature, type DcapOptions } from "../dcap";
import { attempt, docJson, fail, pass, type Evidence, type Outcome } from "../evidence";
import { parseEventLog, replayRtmr3 } from "../eventLog";
import { parseTdxQuote } from "../tdx";
import { AttestationDoc, PATHS, type CheckResult } from "../types";

const short = (b: Buffer) => `${b.toString("hex").slice(0, 16)}…`;

/** Replays the RTMR3 runtime events of `{quote, event_log}` from recomputed digests into the quote's RTMR3. */
export function eventLogReplays(d: { quote: string; event_log: string }): Outcome {
  const quote = parseTdxQuote(d.quote);
  const replay = replayRtmr3(parseEventLog(d.event_log));
  if (replay.events === 0) return fail("the event log has no RTMR3 events");
  if (!replay.rtmr3.equals(quote.rtmr3)) {
    return fail(`replaying the ${replay.events} RTMR3 runtime events (digests recomputed from their payloads) gives ${short(replay.rtmr3)}, but the quote's RTMR3 is ${short(quote.rtmr3)}`);
  }
  const stale = replay.staleDigestFields.length ? `; the digest fields of ${replay.staleDigestFields.join(", ")} did not match their payloads and were ignored` : "";
  return pass(`${replay.events} RTMR3 runtime events, digests recomputed from their payloads, replay to the quote's RTMR3${stale}`);
}

/**
 * Platform: the quotes of `/attestation` and of `/evidences/quote.json` are signed by TEE hardware
 * (DCAP, when collateral is at hand) and their event logs replay to their RTMR3.
 */
export async function platformChecks(ev: Evidence, dcap: DcapOptions): Promise<CheckResult[]> {
  const quotes = [
    { prefix: "platform.", path: PATHS.attestation },
    { prefix: "platform.evidence-", path: PATHS.quote },
  ];
  const results: CheckResult[] = [];
  for (const q of quotes) {
    results.push(await attempt(`${q.prefix}event-log`, () => eventLogReplays(docJson(ev, q.path, AttestationDoc))));
    results.push(await attempt(`${q.prefix}quote-signature`, () => quoteSignature(parseTdxQuote(docJson(ev, q.path, AttestationDoc).quote), dcap)));
  }
  return results;
}
