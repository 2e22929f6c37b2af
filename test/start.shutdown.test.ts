import { expect } from "chai";
import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import { freePorts } from "./helpers/startProcess";
import { INTERRUPTED_MESSAGE } from "../protocol/ops/drain";

const READY = "Press Ctrl-C to stop.";
const SLOW = (ms: number) => `async function main() { await new Promise((r) => setTimeout(r, ${ms})); return "finished"; }`;

/** Every process under `root` (children, grandchildren: the relayer, the triggers service, their sandboxes), from /proc. */
function descendants(root: number): number[] {
  const parent = new Map<number, number>();
  for (const d of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${d}/stat`, "utf8");
      parent.set(Number(d), Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]));
    } catch {
      // gone meanwhile
    }
  }
  const found: number[] = [];
  const queue = [root];
  while (queue.length) {
    const p = queue.shift()!;
    for (const [pid, ppid] of parent) if (ppid === p) (found.push(pid), queue.push(pid));
  }
  return found;
}

/** A process that still runs (a zombie waiting to be reaped has ended), as "pid command line". */
const running = (pids: number[]) =>
  pids.flatMap((pid) => {
    try {
      const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
      if (stat.slice(stat.lastIndexOf(")") + 2).startsWith("Z")) return [];
      return [`${pid} ${fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").replaceAll("\0", " ").slice(0, 200)}`];
    } catch {
      return [];
    }
  });

/** The processes of `pids` still running after up to 3 s (their exit may trail their parent's by a moment). */
async function leftOver(pids: number[]): Promise<string[]> {
  const end = Date.now() + 3_000;
  while (running(pids).length && Date.now() < end) await new Promise((r) => setTimeout(r, 100));
  return running(pids);
}

/** `command` in a process group of its own (as a terminal runs it), its output collected. */
function spawnGroup(command: string, args: string[], env: Record<string, string>) {
  const child = spawn(command, args, { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"], detached: true });
  let text = "";
  child.stdout!.on("data", (c) => (text += c));
  child.stderr!.on("data", (c) => (text += c));
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  const waitFor = async (marker: string, ms: number) => {
    const end = Date.now() + ms;
    while (!text.includes(marker)) {
      if (child.exitCode !== null || child.signalCode !== null) throw new Error(`exited (${child.exitCode ?? child.signalCode}) before "${marker}":\n${text}`);
      if (Date.now() > end) throw new Error(`no "${marker}" within ${ms} ms:\n${text}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  };
  return { child, out: () => text, exited, waitFor };
}

const runDebits = (dataDir: string) => {
  const db = new Database(path.join(dataDir, "billing.sqlite"), { readonly: true });
  try {
    return db.prepare("SELECT cents FROM debits WHERE kind = 'run'").all() as { cents: number }[];
  } finally {
    db.close();
  }
};

/** Kills what is left of a group this test started (only when the test failed half-way). */
function cleanUp(child: ChildProcess, pids: number[]) {
  try {
    process.kill(-child.pid!, "SIGKILL");
  } catch {
    // the group is gone
  }
  for (const line of running(pids)) process.kill(Number(line.split(" ")[0]), "SIGKILL");
}

/**
 * `npm start` stopped by SIGTERM (an orchestrator, `kill`) and by Ctrl-C (SIGINT to the terminal's
 * process group): the supervisor forwards the stop to its children, each drains within its
 * deadline (the run under way finishes, or answers 503 interrupted past the deadline, and is
 * charged), nothing is left running, and the exit code is 0.
 */
describe("npm start stops cleanly on SIGTERM and Ctrl-C", function () {
  this.timeout(420_000);

  async function scenario(command: string, args: string[], deadlineMs: number, runMs: number, stop: (p: ReturnType<typeof spawnGroup>) => void) {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "vesta-start-stop-"));
    const [chain, api] = await freePorts(2);
    const p = spawnGroup(command, args, {
      VESTA_CHAIN_PORT: String(chain),
      VESTA_PORT: String(api),
      VESTA_DATA_DIR: dataDir,
      VESTA_PAYER_COUNT: "1",
      VESTA_SHUTDOWN_DEADLINE_MS: String(deadlineMs),
    });
    let tree: number[] = [];
    try {
      await p.waitFor(READY, 300_000);
      const key = /A first account key to try \(shown once\):\s+(\S+)/.exec(p.out())![1];
      const run = fetch(`http://127.0.0.1:${api}/core/v1/lit_action`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-api-key": key },
        body: JSON.stringify({ code: SLOW(runMs) }),
      }).then(async (r) => ({ status: r.status, body: await r.json() }));
      await new Promise((r) => setTimeout(r, 1500)); // the run is in its sandbox
      tree = descendants(p.child.pid!);
      expect(tree.length, "the supervisor, the relayer, the triggers service (and sandboxes) run").to.be.at.least(3);
      const stopped = Date.now();
      stop(p);
      const answered = await run;
      const answeredAfterMs = Date.now() - stopped;
      const code = await p.exited;
      return { answered, answeredAfterMs, code, tree, left: await leftOver(tree), out: p.out(), debits: runDebits(dataDir) };
    } finally {
      cleanUp(p.child, tree);
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  }

  it("`npm start` (through npm, as an operator runs it) on SIGTERM: the run under way finishes and is charged, every child is gone, exit code 0", async () => {
    const r = await scenario("npm", ["start", "--silent"], 20_000, 4_000, (p) => p.child.kill("SIGTERM"));
    expect([r.answered.status, r.answered.body.response], r.out).to.deep.equal([200, "finished"]);
    expect(r.code, r.out).to.equal(0);
    expect(r.left, "no process of npm start is left").to.deep.equal([]);
    expect(r.debits, "the run's charge is in the ledger").to.have.length(1);
    expect(r.debits[0].cents, "4 started seconds at 1 cent, at least").to.be.within(4, 6);
  });

  it("Ctrl-C (SIGINT to the whole process group) past the deadline: the run answers 503 interrupted and is charged the time it ran, every child is gone, exit code 0", async () => {
    const r = await scenario(process.execPath, ["--require", "ts-node/register/transpile-only", "scripts/start.ts"], 2_000, 60_000, (p) => process.kill(-p.child.pid!, "SIGINT"));
    expect([r.answered.status, r.answered.body.code, r.answered.body.message], r.out).to.deep.equal([503, "interrupted", INTERRUPTED_MESSAGE]);
    expect(r.code, r.out).to.equal(0);
    expect(r.left, "no process of npm start is left").to.deep.equal([]);
    expect(r.debits, "the interrupted run is charged").to.have.length(1);
    expect(r.debits[0].cents).to.be.within(2, 6);
    expect(r.answeredAfterMs, "answered at the deadline, not when the action would have ended").to.be.within(1_500, 20_000);
  });
});
