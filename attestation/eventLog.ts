import { createHash } from "node:crypto";
import { z } from "zod";
import { bareHex, EventLogEntry, RUNTIME_EVENT_TYPE } from "./types";

const sha384 = (...parts: Buffer[]) => createHash("sha384").update(Buffer.concat(parts)).digest();

/** Parses an event log (a JSON string holding an array of events); throws with the first problem. */
export function parseEventLog(json: string): EventLogEntry[] {
  let raw: unknown;
  try {
    raw = JSON.parse(json);
  } catch {
    throw new Error("the event log is not valid JSON");
  }
  const parsed = z.array(EventLogEntry).safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new Error(`the event log is malformed at ${issue.path.join(".")}: ${issue.message}`);
  }
  return parsed.data;
}

/**
 * The digest of a runtime event, computed from what it says rather than taken from its `digest`
 * field: SHA-384 over the event type as 4 bytes little-endian, ":", the name, ":", the payload bytes.
 */
export function runtimeEventDigest(eventType: number, name: string, payload: Buffer): Buffer {
  const type = Buffer.alloc(4);
  type.writeUInt32LE(eventType);
  return sha384(type, Buffer.from(":"), Buffer.from(name, "utf8"), Buffer.from(":"), payload);
}

/** A runtime event as dstack logs it, with its digest filled in. */
export function runtimeEvent(name: string, payload: Buffer): EventLogEntry {
  const digest = runtimeEventDigest(RUNTIME_EVENT_TYPE, name, payload).toString("hex");
  return { imr: 3, event_type: RUNTIME_EVENT_TYPE, digest, event: name, event_payload: payload.toString("hex") };
}

/** Extends a 48-byte register with each digest in turn: register = SHA-384(register || digest), from zero. */
export function replayRegister(digests: Buffer[]): Buffer {
  return digests.reduce((register, digest) => sha384(register, digest), Buffer.alloc(48));
}

export type Rtmr3Replay = {
  rtmr3: Buffer;
  events: number;
  /** Names of events whose `digest` field differs from the recomputed digest (the field is ignored). */
  staleDigestFields: string[];
};

/**
 * Replays the RTMR3 events of a log from their recomputed digests. Every RTMR3 event must be a
 * runtime event: any other kind could not be recomputed, so the log is refused.
 */
export function replayRtmr3(log: EventLogEntry[]): Rtmr3Replay {
  const events = log.filter((e) => e.imr === 3);
  const digests: Buffer[] = [];
  const staleDigestFields: string[] = [];
  for (const [i, e] of events.entries()) {
    if (e.event_type !== RUNTIME_EVENT_TYPE) {
      throw new Error(`RTMR3 event ${i} (${e.event || "unnamed"}) has type 0x${e.event_type.toString(16)}, not a runtime event (0x08000001): its digest cannot be recomputed`);
    }
    const digest = runtimeEventDigest(e.event_type, e.event, Buffer.from(bareHex(e.event_payload), "hex"));
    if (e.digest && bareHex(e.digest) !== digest.toString("hex")) staleDigestFields.push(e.event);
    digests.push(digest);
  }
  return { rtmr3: replayRegister(digests), events: events.length, staleDigestFields };
}

/** The payloads (hex) of the RTMR3 runtime events named `name`, in log order. */
export function runtimeEventPayloads(log: EventLogEntry[], name: string): string[] {
  return log.filter((e) => e.imr === 3 && e.event_type === RUNTIME_EVENT_TYPE && e.event === name).map((e) => bareHex(e.event_payload));
}
