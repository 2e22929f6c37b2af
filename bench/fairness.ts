import { call, newAccount, startStack, type Stack } from "../test/helpers/relayer";

const WORKERS = 2;
const VICTIM_RUNS = 20;
const SLEEP_MS = 2000;
const TARGET_MS = 1000;
const HELLO = "async function main() { return 'hello' }";
const SLEEP = `async function main() { await new Promise((r) => setTimeout(r, ${SLEEP_MS})); return 'slept' }`;

type Latency = { p50: number; max: number };

const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))];

/** The victim's trivial runs, one after the other: each one's latency (request to answer). */
async function victimLatency(stack: Stack, key: string): Promise<Latency> {
  const ms: number[] = [];
  for (let i = 0; i < VICTIM_RUNS; i++) {
    const t0 = performance.now();
    const r = await call(stack, "POST", "/lit_action", { key, body: { code: HELLO } });
    if (r.status !== 200) throw new Error(`victim run: ${r.status} ${JSON.stringify(r.body)}`);
    ms.push(performance.now() - t0);
  }
  return { p50: pct(ms, 50), max: Math.max(...ms) };
}

/** An attacker that keeps the sandbox as full as the service lets it (sleeping runs, resent as soon as one ends or is refused). */
function attack(stack: Stack, key: string, concurrency: number) {
  let stop = false;
  let refused = 0;
  const loops = Array.from({ length: concurrency }, async () => {
    while (!stop) {
      const r = await call(stack, "POST", "/lit_action", { key, body: { code: SLEEP } });
      if (r.status === 429) {
        refused++;
        await new Promise((res) => setTimeout(res, 50));
      }
    }
  });
  return {
    stop: async () => {
      stop = true;
      await Promise.all(loops);
      return refused;
    },
  };
}

async function measure(label: string, env: Record<string, string>) {
  const stack = await startStack({ payerCount: 1, env: { VESTA_SANDBOX_WORKERS: String(WORKERS), VESTA_BILLING: "off", ...env } });
  try {
    const attacker = await newAccount(stack, "attacker");
    const victim = await newAccount(stack, "victim");
    await Promise.all([victimLatency(stack, victim.apiKey), call(stack, "POST", "/lit_action", { key: attacker.apiKey, body: { code: HELLO } })]); // warm both workers
    const alone = await victimLatency(stack, victim.apiKey);
    const a = attack(stack, attacker.apiKey, 8);
    await new Promise((r) => setTimeout(r, 500)); // the attacker holds what it can
    const attacked = await victimLatency(stack, victim.apiKey);
    const refused = await a.stop();
    const row = (name: string, l: Latency) => `${name.padEnd(22)} p50 ${l.p50.toFixed(0).padStart(5)} ms   max ${l.max.toFixed(0).padStart(5)} ms`;
    console.log(`${label}:`);
    console.log(`  ${row("victim alone", alone)}`);
    console.log(`  ${row("victim under attack", attacked)}   (attacker refused ${refused} times with 429)`);
    return attacked;
  } finally {
    await stack.stop();
  }
}

/**
 * Fair share of the sandbox: a victim account's trivial runs, alone and while an attacker account
 * keeps 8 sleeping runs (2 s each) in flight, on 2 workers; with the fair share (each account may
 * hold all workers but one) and without it (one payer may hold them all), in one run.
 */
export async function printFairnessBench() {
  console.log(`== Fair share of the sandbox (${WORKERS} workers; attacker: 8 concurrent ${SLEEP_MS} ms runs; victim: ${VICTIM_RUNS} trivial runs in a row)`);
  const fair = await measure("fair share (default: 1 of 2 workers per payer)", {});
  await measure("no fair share (VESTA_RUNS_PER_PAYER=2: one payer may hold every worker)", { VESTA_RUNS_PER_PAYER: String(WORKERS) });
  console.log(`  victim's worst wait under attack with the fair share: ${fair.max.toFixed(0)} ms (target < ${TARGET_MS} ms) ${fair.max < TARGET_MS ? "ok" : "OVER"}`);
}
