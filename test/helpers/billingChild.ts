/**
 * A process that records debits and then waits to be killed (test/billing.ledger.test.ts):
 *   node --require ts-node/register/transpile-only test/helpers/billingChild.ts
 * Environment: the billing variables (Stripe mode against the test double), CHILD_DATA_DIR,
 * CHILD_PAYER, CHILD_DEBITS ("5,3": 5 debits, a settlement, 3 more debits), CHILD_SETTLE_LAST
 * ("1": start settling the last group too), CHILD_RESERVE (cents: then reserve that much for a run,
 * at 1 cent a second, record its start as the run route does when the run leaves the queue, and keep
 * heartbeating), CHILD_QUEUED (cents: reserve that much for a run that never starts, as one still
 * queued). Prints "debited" once every debit (and the reservations) is recorded.
 */
import { spawn } from "node:child_process";
import path from "node:path";
import pino from "pino";
import { loadBillingConfig } from "../../billing/config";
import { Billing } from "../../billing/service";

async function main() {
  const env = process.env;
  const billing = await Billing.open(loadBillingConfig(env, "development").config, { dataDir: env.CHILD_DATA_DIR! }, pino({ level: "silent" }));
  const customerId = await billing.customerId({ key: env.CHILD_PAYER!, account: "0x00" });
  const groups = env.CHILD_DEBITS!.split(",").map(Number);
  for (const [i, n] of groups.entries()) {
    await Promise.all(Array.from({ length: n }, () => billing.debit(customerId, 1, "run", "1s")));
    if (i < groups.length - 1) await billing.settle();
  }
  if (env.CHILD_RESERVE) {
    const started = await billing.reserve({ key: env.CHILD_PAYER!, account: "0x00" }, Number(env.CHILD_RESERVE), "a run", { kind: "run", detail: "child run", unitCents: 1 });
    started.noteStart();
    if (env.CHILD_QUEUED) await billing.reserve({ key: env.CHILD_PAYER!, account: "0x00" }, Number(env.CHILD_QUEUED), "a run", { kind: "run", detail: "queued run", unitCents: 1 });
    billing.start(new AbortController().signal);
  }
  console.log("debited");
  if (env.CHILD_SETTLE_LAST === "1") void billing.settle();
  setInterval(() => undefined, 60_000); // until killed
}

/** Runs test/helpers/billingChild.ts until it printed "debited", then SIGKILLs it. */
export async function debitThenDie(env: Record<string, string>, killWhen: () => Promise<void> = async () => undefined): Promise<void> {
  const child = spawn(process.execPath, ["--require", "ts-node/register/transpile-only", path.join(__dirname, "billingChild.ts")], {
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  await new Promise<void>((resolve, reject) => {
    const onData = (chunk: Buffer) => (out += chunk) && out.includes("debited") && resolve();
    child.stdout.on("data", onData);
    child.stderr.on("data", onData);
    child.once("exit", (code) => reject(new Error(`the child exited (${code}) before debiting:\n${out}`)));
  });
  await killWhen();
  child.kill("SIGKILL");
  await exited;
}

if (require.main === module) {
  main().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
