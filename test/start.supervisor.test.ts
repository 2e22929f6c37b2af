import { expect } from "chai";
import path from "node:path";
import { Supervised } from "../scripts/start/supervisor";

const ENTRY = path.join(__dirname, "fixtures", "supervised-child.js");
const backoff = { firstMs: 50, maxMs: 200, stableMs: 60_000 };

/** npm start's supervisor (scripts/start/supervisor.ts), with a stand-in child. */
describe("npm start's supervisor", function () {
  this.timeout(60_000);

  it("starts a child that keeps stopping again, with a log line each time and a growing, capped delay, until stopped", async () => {
    const lines: string[] = [];
    const s = new Supervised({ name: "fixture", entry: ENTRY, env: { ...process.env, FIXTURE_MODE: "crash" } }, (l) => void lines.push(l), backoff);
    expect(await s.start()).to.match(/^fixture:\/\/\d+$/);
    const end = Date.now() + 40_000;
    while (lines.filter((l) => l.includes(" is back ")).length < 4 && Date.now() < end) await new Promise((r) => setTimeout(r, 50));
    await s.stop();
    const stopped = lines.length;
    const restarts = lines.filter((l) => l.includes("exited with code 3"));
    expect(restarts.slice(0, 4).map((l) => l.replace(/pid \d+/, "pid N"))).to.deep.equal([
      "the fixture (pid N) exited with code 3; starting it again in 0.05 s (restart 1); the other parts keep serving",
      "the fixture (pid N) exited with code 3; starting it again in 0.1 s (restart 2); the other parts keep serving",
      "the fixture (pid N) exited with code 3; starting it again in 0.2 s (restart 3); the other parts keep serving",
      "the fixture (pid N) exited with code 3; starting it again in 0.2 s (restart 4); the other parts keep serving",
    ]);
    expect(lines[0]).to.match(/^started the fixture \(pid \d+\)$/);
    expect(lines.filter((l) => / is back \(pid \d+\) at fixture:\/\/\d+$/.test(l)).length).to.be.at.least(4);
    await new Promise((r) => setTimeout(r, 500));
    expect(lines.length, "nothing started after stop").to.equal(stopped);
    expect(s.pid).to.equal(undefined);
  });

  it("fails the first start of a child that cannot start, and does not start it again", async () => {
    const lines: string[] = [];
    const s = new Supervised({ name: "fixture", entry: ENTRY, env: { ...process.env, FIXTURE_MODE: "fail" } }, (l) => void lines.push(l), backoff);
    const err = await s.start().catch((e: Error) => e);
    expect((err as Error).message).to.equal("the fixture exited with code 1 before it was ready");
    await new Promise((r) => setTimeout(r, 300));
    expect(lines).to.have.length(1);
  });

  it("stops a serving child with SIGTERM and does not start it again", async () => {
    const lines: string[] = [];
    const s = new Supervised({ name: "fixture", entry: ENTRY, env: { ...process.env, FIXTURE_MODE: "serve" } }, (l) => void lines.push(l), backoff);
    await s.start();
    const pid = s.pid!;
    await s.stop();
    expect(() => process.kill(pid, 0)).to.throw(/ESRCH/);
    expect(lines.filter((l) => l.includes("exited"))).to.deep.equal([]);
  });
});
