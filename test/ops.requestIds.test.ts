import { expect } from "chai";
import { serviceLogger } from "../protocol/ops/logger";
import { SandboxPool } from "../executor/sandbox/host/pool";
import type { SandboxLauncher } from "../executor/sandbox/host/launchers";
import { DEFAULT_LIMITS, type Host } from "../executor/sandbox/types";
import { newAccount, startStack, type Stack } from "./helpers/relayer";
import { sandboxChildren } from "./helpers/sandboxes";
import { until } from "./helpers/until";

type Line = Record<string, unknown> & { msg: string };

// Request ids reach library lines by the request's own logger, handed down (no ambient
// AsyncLocalStorage, issue 18): a line about a request's work carries its ids, and a line about
// no request carries none.
describe("request ids on the lines logged for a request's work", function () {
  this.timeout(120_000);
  const lines: Line[] = [];
  let stack: Stack;
  let apiKey: string;
  /** Sandbox processes of this file's relayer (not those another test file's pools may still be ending). */
  let others: Set<number>;
  const ours = () => sandboxChildren().filter((p) => !others.has(p));

  before(async () => {
    others = new Set(sandboxChildren());
    const logger = serviceLogger("info", { write: (line: string) => void lines.push(JSON.parse(line) as Line) });
    stack = await startStack({ payerCount: 1, env: { VESTA_SANDBOX_WORKERS: "1" }, logger });
    ({ apiKey } = await newAccount(stack, "request ids"));
  });
  after(async () => stack?.stop());

  const run = (code: string, correlationId: string) =>
    fetch(`${stack.api}/lit_action`, { method: "POST", headers: { "x-api-key": apiKey, "content-type": "application/json", "x-correlation-id": correlationId }, body: JSON.stringify({ code }) });

  it("a sandbox killed during a run: the pool's line names that run's request (X-Request-Id, X-Correlation-Id); the idle sandbox killed after it, none", async function () {
    expect((await run("async function main() { return 1 }", "warm")).status).to.equal(200); // the sandbox is up
    const pending = run("async function main() { for (;;) {} }", "corr-killed");
    await until(() => stack.relayer.ctx.executor.sandboxLoad().busy === 1, "the run to reach the sandbox", 10_000);
    const running = ours();
    expect(running, "the one sandbox process").to.have.length(1);
    const [pid] = running;
    process.kill(pid, "SIGKILL");
    const res = await pending;
    expect(res.status).to.equal(422);
    const requestId = res.headers.get("x-request-id");
    expect(requestId).to.match(/^[0-9a-f-]{36}$/);

    await until(() => lines.some((l) => l.msg === "request" && l.request_id === requestId), "the request's line", 10_000);
    const died = lines.filter((l) => l.msg === "sandbox: a sandbox ended during a run");
    expect(died, JSON.stringify(died)).to.have.length(1);
    expect(died[0]).to.deep.include({ request_id: requestId, correlation_id: "corr-killed", pid });
    expect(lines.find((l) => l.msg === "request" && l.request_id === requestId)).to.deep.include({ correlation_id: "corr-killed", status: 422 });

    // The replacement, killed while it holds no run: a line about no request.
    expect((await run("async function main() { return 3 }", "replacement")).status, "the replacement is up").to.equal(200); // and now idle
    const replacement = ours().filter((p) => p !== pid);
    expect(replacement).to.have.length(1);
    const [idle] = replacement;
    process.kill(idle, "SIGKILL");
    await until(() => lines.some((l) => l.msg === "sandbox: an idle sandbox ended; replacing it"), "the idle sandbox's line", 10_000);
    const idleLine = lines.find((l) => l.msg === "sandbox: an idle sandbox ended; replacing it")!;
    expect(idleLine).to.not.have.property("request_id");
    expect(idleLine).to.not.have.property("correlation_id");
    // And the service goes on.
    expect((await run("async function main() { return 2 }", "after")).status).to.equal(200);
  });
});

describe("request ids of the sandbox pool's lines: the run they are about", function () {
  // The sandbox process says "done" for run A, then "poisoned" at once (its cleanup after A failed,
  // process/main.ts); meanwhile the pool handed the queued run B to it. The line is A's (review
  // finding: it went to B's request and B's caller-chosen correlation id).
  it("a sandbox poisoned by the run it ended: the line carries that run's ids, not those of the run queued after it", async () => {
    const lines: Line[] = [];
    const base = serviceLogger("info", { write: (l: string) => void lines.push(JSON.parse(l) as Line) });
    let spawned = 0;
    const launcher: SandboxLauncher = (_config, _frameBytes, events) => {
      const n = ++spawned;
      setImmediate(() => events.message({ type: "ready" }));
      return {
        pid: undefined,
        send(msg) {
          if (msg.type !== "run") return;
          setImmediate(() => {
            events.message({ type: "done", runId: msg.runId, responseJson: JSON.stringify(`ran on ${n}`), logs: "", wasmBytes: 1, poisoned: false });
            if (n === 1) events.message({ type: "poisoned", diagnostic: "run A's handles were not put back" });
          });
        },
        stop: async () => events.exit({ code: 0, signal: null, outOfMemory: false }),
      };
    };
    const pool = new SandboxPool({ size: 1, launcher, logger: base });
    const noHost: Host = async () => ({ ok: false, message: "no host" }) as never;
    const req = { code: Buffer.from("x"), ipfsId: "QmX", paramsJson: "{}", limits: DEFAULT_LIMITS };
    try {
      const [a, b] = await Promise.all([
        pool.run(req, noHost, undefined, { log: base.child({ request_id: "req-A", correlation_id: "a" }) }),
        pool.run(req, noHost, undefined, { log: base.child({ request_id: "req-B", correlation_id: "b" }) }),
      ]);
      expect([a.response, b.response], "B went back to the queue and ran on the replacement").to.deep.equal(["ran on 1", "ran on 2"]);
      const poisoned = lines.filter((l) => /may be damaged/.test(l.msg));
      expect(poisoned, JSON.stringify(lines)).to.have.length(1);
      expect(poisoned[0]).to.deep.include({ request_id: "req-A", correlation_id: "a", diagnostic: "run A's handles were not put back" });
    } finally {
      await pool.close();
    }
  });
});
