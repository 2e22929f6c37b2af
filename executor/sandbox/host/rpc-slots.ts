/**
 * How many requests to the deployment's RPC URLs one run may have under way at once. A node runs
 * calls one after another (Hardhat's EDR does), so a run that fires its 50 fetches at once would put
 * 50 calls in front of every other account's reads and writes; with at most RPC_IN_FLIGHT_PER_RUN
 * under way, the run's others wait their turn (not refused), and another caller's request waits
 * behind at most that many of each run.
 */
export const RPC_IN_FLIGHT_PER_RUN = 2;

/**
 * A run's turns: `turn(fn, signal)` runs fn once fewer than `size` others are under way, in the
 * order asked; one still waiting when `signal` aborts (the run ended) is rejected and never runs.
 */
export function rpcTurns(size = RPC_IN_FLIGHT_PER_RUN): <T>(fn: () => Promise<T>, signal?: AbortSignal) => Promise<T> {
  let busy = 0;
  const waiting: Array<() => void> = [];
  const release = () => {
    const next = waiting.shift();
    if (next) next(); // the turn is handed over as it is
    else busy--;
  };
  return async (fn, signal) => {
    if (busy < size) busy++;
    else {
      await new Promise<void>((resolve, reject) => {
        const go = () => {
          signal?.removeEventListener("abort", gone);
          resolve();
        };
        const gone = () => {
          waiting.splice(waiting.indexOf(go), 1);
          reject(new Error("fetch: the run has ended"));
        };
        if (signal?.aborted) return reject(new Error("fetch: the run has ended"));
        signal?.addEventListener("abort", gone, { once: true });
        waiting.push(go);
      });
    }
    try {
      return await fn();
    } finally {
      release();
    }
  };
}
