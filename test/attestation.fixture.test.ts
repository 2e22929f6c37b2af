import { expect } from "chai";
import { createHash } from "node:crypto";
import fixture from "../attestation/fixtures/dstack-tdx-quote-report.json";
import { eventLogReplays } from "../attestation/checks/platform";
import { quoteSignature } from "../attestation/dcap";
import { parseEventLog, replayRtmr3, runtimeEventDigest } from "../attestation/eventLog";
import { parseTdxQuote, syntheticTdxQuote } from "../attestation/tdx";
import { RUNTIME_EVENT_TYPE, type EventLogEntry } from "../attestation/types";

const rtmr3Events = (log: EventLogEntry[]) => log.filter((e) => e.imr === 3);

/** The real dstack TDX attestation (quote v4 + event log) with its RTMR3 event `name` changed. */
function withEvent(name: string, change: (e: EventLogEntry) => void) {
  const log = parseEventLog(fixture.event_log);
  change(rtmr3Events(log).find((e) => e.event === name)!);
  return { quote: fixture.quote, event_log: JSON.stringify(log) };
}
const sha384 = (b: Buffer) => createHash("sha384").update(b).digest();

describe("attestation verifier on a real dstack TDX quote", function () {
  const quote = parseTdxQuote(fixture.quote);
  const log = parseEventLog(fixture.event_log);

  describe("parseTdxQuote", function () {
    it("reads a TDX quote v4: RTMR3 at bytes 520..568 and report data at 568..632", function () {
      const raw = Buffer.from(fixture.quote, "hex");
      expect(quote.version).to.equal(4);
      expect(quote.rtmr3).to.deep.equal(raw.subarray(520, 568));
      expect(quote.reportData.toString("hex")).to.equal(fixture.report_data);
      expect(quote.development).to.equal(false);
      expect(parseTdxQuote(`0x${fixture.quote}`).rtmr3).to.deep.equal(quote.rtmr3);
    });

    it("refuses what is not a TDX quote v4, saying why", function () {
      const v3 = Buffer.from(fixture.quote, "hex");
      v3.writeUInt16LE(3, 0);
      expect(() => parseTdxQuote(v3.toString("hex"))).to.throw("quote version 3: only TDX quotes v4 are supported");
      expect(() => parseTdxQuote(fixture.quote.slice(0, 1000))).to.throw("too short for a TDX quote v4");
      expect(() => parseTdxQuote("zz")).to.throw("the quote is not hex");
    });
  });

  describe("runtime event digests and RTMR3 replay", function () {
    it("recomputes all 8 RTMR3 digests from type, name and payload, equal to the logged ones", function () {
      const events = rtmr3Events(log);
      expect(events.map((e) => e.event)).to.deep.equal([
        "system-preparing", "app-id", "compose-hash", "instance-id", "boot-mr-done", "key-provider", "system-ready", "LIUM_MINER_HOTKEY",
      ]);
      for (const e of events) {
        expect(e.event_type).to.equal(RUNTIME_EVENT_TYPE);
        expect(runtimeEventDigest(e.event_type, e.event, Buffer.from(e.event_payload, "hex")).toString("hex"), e.event).to.equal(e.digest);
      }
    });

    it("replays them (register = SHA-384(register || digest) from zero) to the quote's RTMR3", function () {
      const manual = rtmr3Events(log).reduce((r, e) => sha384(Buffer.concat([r, Buffer.from(e.digest, "hex")])), Buffer.alloc(48));
      const replay = replayRtmr3(log);
      expect(replay.rtmr3).to.deep.equal(manual).and.to.deep.equal(quote.rtmr3);
      expect(replay).to.include({ events: 8 }).and.to.have.property("staleDigestFields").that.is.empty;
      expect(eventLogReplays(fixture)).to.deep.equal({
        status: "pass",
        reason: "8 RTMR3 runtime events, digests recomputed from their payloads, replay to the quote's RTMR3",
      });
    });

    it("fails when one event payload is edited, even with its digest field recomputed to match", function () {
      const result = eventLogReplays(
        withEvent("compose-hash", (e) => {
          e.event_payload = "00".repeat(32);
          e.digest = runtimeEventDigest(e.event_type, e.event, Buffer.alloc(32)).toString("hex");
        }),
      );
      expect(result.status).to.equal("fail");
      expect(result.reason).to.match(/^replaying the 8 RTMR3 runtime events \(digests recomputed from their payloads\) gives [0-9a-f]{16}…, but the quote's RTMR3 is [0-9a-f]{16}…$/);
    });

    it("ignores an edited digest field: the digest is recomputed, so the result is unchanged", function () {
      expect(eventLogReplays(withEvent("app-id", (e) => (e.digest = "ff".repeat(48))))).to.deep.equal({
        status: "pass",
        reason: "8 RTMR3 runtime events, digests recomputed from their payloads, replay to the quote's RTMR3; the digest fields of app-id did not match their payloads and were ignored",
      });
    });

    it("fails when a payload is edited and its digest field left as logged (the field is not trusted)", function () {
      expect(eventLogReplays(withEvent("instance-id", (e) => (e.event_payload = "11".repeat(20)))).status).to.equal("fail");
    });

    it("refuses an RTMR3 event that is not a runtime event, whose digest could not be recomputed", function () {
      const edited = withEvent("LIUM_MINER_HOTKEY", (e) => (e.event_type = 0x80000001));
      expect(() => eventLogReplays(edited)).to.throw("RTMR3 event 7 (LIUM_MINER_HOTKEY) has type 0x80000001, not a runtime event (0x08000001)");
    });

    it("refuses a malformed event log", function () {
      expect(() => parseEventLog("{")).to.throw("the event log is not valid JSON");
      expect(() => parseEventLog(JSON.stringify([{ imr: 3, event_type: 1, digest: "", event: "x", event_payload: "xyz" }]))).to.throw(
        "the event log is malformed at 0.event_payload: event_payload must be hex",
      );
    });
  });

  describe("quote signature (DCAP)", function () {
    it("is skipped, not passed, without collateral", async function () {
      expect(await quoteSignature(quote, {})).to.deep.equal({
        status: "skip",
        reason: "no DCAP collateral: give --collateral <file> or --pccs-url <url> to verify the quote signature",
      });
    });

    it("fails with dcap-qvl's reason when the collateral does not verify", async function () {
      const collateral = {
        tcb_info: JSON.stringify({ id: "TDX", version: 3, issueDate: "2020-01-01T00:00:00Z", nextUpdate: "2099-01-01T00:00:00Z", fmspc: "00", pceId: "0000", tcbType: 0, tcbEvaluationDataNumber: 1, tcbLevels: [] }),
        tcb_info_issuer_chain: "", tcb_info_signature: "", qe_identity: "{}", qe_identity_issuer_chain: "", qe_identity_signature: "",
        pck_crl: "", root_ca_crl: "", pck_crl_issuer_chain: "",
      };
      expect(await quoteSignature(quote, { collateral })).to.deep.equal({
        status: "fail",
        reason: "DCAP verification failed: Certificate chain is too short for TCB Info",
      });
    });

    it("never passes a synthetic development quote", async function () {
      const dev = parseTdxQuote(syntheticTdxQuote(quote.rtmr3, Buffer.alloc(64)).toString("hex"));
      expect(dev.development).to.equal(true);
      expect((await quoteSignature(dev, {})).status).to.equal("skip");
      expect(await quoteSignature(dev, { pccsUrl: "http://127.0.0.1:9" })).to.deep.equal({
        status: "fail",
        reason: "DEVELOPMENT evidence: a synthetic quote made without a TEE, signed by no hardware",
      });
    });
  });
});
