/**
 * Gives back the memory Hardhat's EDR node spends on each call that executes EVM code. EDR records
 * every step of such an execution (for its Solidity stack traces; no setting turns it off) and
 * hands the record to JavaScript inside the call's answer object, a native object whose memory V8
 * does not see: nothing makes V8 collect it, so the record stays until some unrelated collection
 * happens. Measured here, one eth_call of a 4-byte loop keeps ~50-100 MB per million gas it burns:
 * 60 calls of 1M gas kept 2.8 GB and kept growing (30M gas, the node's default for a call without
 * `gas`, is ~3.4 GB and ~8 s each); collecting after each call holds the node at ~0.4 GB.
 *
 * So after such calls the chain's process collects its young generation (well under a millisecond
 * while the answer objects are young), once per MINOR_AFTER_MS of EVM work, and its whole heap once
 * per MAJOR_AFTER_MS (~5-30 ms, for records that outlived a young collection). Cheap reads
 * (eth_getBalance, blocks, logs) execute nothing and are not counted.
 */
import v8 from "node:v8";
import vm from "node:vm";

/** Methods whose answer holds an execution record (what EDR traces). */
export const EXECUTES = new Set(["eth_call", "eth_estimateGas", "eth_createAccessList", "eth_sendRawTransaction", "eth_sendTransaction", "evm_mine", "hardhat_mine", "debug_traceCall", "debug_traceTransaction"]);
const MINOR_AFTER_MS = 20;
const MAJOR_AFTER_MS = 1_000;

type Gc = (options?: { type?: "minor" | "major" }) => void;

/** V8's gc(), without `--expose-gc` on the command line (as jest's leak detector gets it). */
function v8Gc(): Gc | undefined {
  const exposed = (globalThis as { gc?: Gc }).gc;
  if (exposed) return exposed;
  try {
    v8.setFlagsFromString("--expose-gc");
    return vm.runInNewContext("gc") as Gc;
  } catch {
    return undefined; // no collection: the node's memory then follows V8's own collections, as before
  } finally {
    v8.setFlagsFromString("--no-expose-gc");
  }
}

export class TraceMemory {
  private minorDue = 0;
  private majorDue = 0;

  constructor(private readonly gc: Gc | undefined = v8Gc()) {}

  /** Counts `ms` of work of `method` and collects when enough executed since the last collection. */
  after(method: string, ms: number): void {
    if (!this.gc || !EXECUTES.has(method)) return;
    this.minorDue += ms;
    this.majorDue += ms;
    if (this.majorDue >= MAJOR_AFTER_MS) {
      [this.minorDue, this.majorDue] = [0, 0];
      this.gc();
    } else if (this.minorDue >= MINOR_AFTER_MS) {
      this.minorDue = 0;
      this.gc({ type: "minor" });
    }
  }
}
