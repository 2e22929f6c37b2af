import { expect } from "chai";
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import pino from "pino";
import { LocalKeyProvider } from "../executor/keys/local";
import { makePrivateDir, socketOpenToOthers } from "../executor/sandbox/host/isolation";
import { NOBODY, processLauncher } from "../executor/sandbox/host/launchers";
import { SandboxPool } from "../executor/sandbox/host/pool";
import { sandboxFiles } from "../executor/sandbox/host/sandbox-files";
import { DEFAULT_LIMITS, type Host, type RunResult } from "../executor/sandbox/types";
import { loadConfig } from "../relayer/config";
import { call, newAccount, startStack, type Stack } from "./helpers/relayer";

const DOUBLE = path.join(__dirname, "fixtures", "sandbox-double.js");
const SECRET_ENV = "VESTA_TEST_SECRET_IN_RELAYER_ENV";
const noHost: Host = async () => {
  throw new Error("no host calls expected");
};
const limits = { ...DEFAULT_LIMITS, timeoutMs: 10_000 };
const request = (code: string, params: unknown = {}) => ({ code: Buffer.from(code), ipfsId: "QmIsolation", paramsJson: JSON.stringify(params), limits });

/** The sandbox processes this process started (children running the sandbox bundle). */
function sandboxChildren(): number[] {
  const entry = sandboxFiles().entry;
  return fs
    .readdirSync("/proc")
    .filter((d) => /^\d+$/.test(d))
    .flatMap((d) => {
      try {
        const stat = fs.readFileSync(`/proc/${d}/stat`, "utf8");
        const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
        return ppid === process.pid && fs.readFileSync(`/proc/${d}/cmdline`, "utf8").split("\0").includes(entry) ? [Number(d)] : [];
      } catch {
        return []; // gone meanwhile
      }
    });
}

const statusField = (pid: number, name: string) => new RegExp(`^${name}:\\t?(.*)$`, "m").exec(fs.readFileSync(`/proc/${pid}/status`, "utf8"))?.[1].trim().split(/\s+/).filter(Boolean);

/** Waits until `check` holds (polling), or fails with `what`. */
async function until(check: () => boolean, what: string, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe("sandbox processes hold no secrets (issue 17.1)", function () {
  this.timeout(120_000);
  before(function () {
    // The tests run as root, as the relayer does in its container: the sandbox then runs as nobody.
    expect(process.getuid?.(), "these tests need root, to check the switch to another user").to.equal(0);
  });

  describe("the relayer's own sandbox processes, seen from outside", function () {
    /** A user of its own for this relayer's sandboxes (VESTA_SANDBOX_UID/GID); the default, nobody, is what the probe below sees. */
    const USER = { uid: 4242, gid: 4243 };
    let stack: Stack;
    before(async () => {
      process.env[SECRET_ENV] = "0xsecret";
      stack = await startStack({ env: { VESTA_SANDBOX_WORKERS: "1", VESTA_SANDBOX_UID: String(USER.uid), VESTA_SANDBOX_GID: String(USER.gid) } });
    });
    after(async () => {
      delete process.env[SECRET_ENV];
      await stack?.stop();
    });

    it("runs actions in separate processes with an empty environment, as the sandbox user, under the permission model, with none of the relayer's files open", async function () {
      const { apiKey } = await newAccount(stack, "isolated");
      const r = await call(stack, "POST", "/lit_action", { key: apiKey, body: { code: "async function main() { return 'ran' }" } });
      expect([r.status, r.body.response]).to.deep.equal([200, "ran"]);
      const pids = sandboxChildren();
      expect(pids.length).to.be.within(1, 2); // the one that ran, and perhaps the spare
      const dataDir = fs.realpathSync(stack.relayerConfig.dataDir);
      expect(fs.statSync(dataDir).mode & 0o777).to.equal(0o700); // made private by the executor
      for (const pid of pids) {
        expect(pid).to.not.equal(process.pid);
        expect(fs.readFileSync(`/proc/${pid}/environ`, "utf8")).to.equal(""); // not even PATH, let alone VESTA_PAYER_KEYS
        expect(statusField(pid, "Uid")).to.deep.equal(Array(4).fill(String(USER.uid)));
        expect(statusField(pid, "Gid")).to.deep.equal(Array(4).fill(String(USER.gid)));
        expect(statusField(pid, "Groups")).to.deep.equal([]);
        const args = fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
        const files = sandboxFiles();
        expect(args).to.include.members(["--experimental-permission", "--no-addons", "--disallow-code-generation-from-strings"]);
        expect(args.filter((a) => a.startsWith("--allow-"))).to.have.members([files.entry, files.wasmFile, files.guestDir].map((f) => `--allow-fs-read=${f}`));
        expect(args.some((a) => /^--max-old-space-size=\d+$/.test(a))).to.equal(true);
        const open = fs.readdirSync(`/proc/${pid}/fd`).map((fd) => {
          try {
            return fs.readlinkSync(`/proc/${pid}/fd/${fd}`);
          } catch {
            return "(closed)";
          }
        });
        // The relayer holds actions.sqlite, billing.sqlite (and read the root secret) in the data dir: none is inherited.
        expect(open.filter((target) => target.startsWith(dataDir) || target.startsWith("/var/run")), open.join(", ")).to.deep.equal([]);
        expect(open.filter((target) => target.startsWith("/") && !target.startsWith("/dev/null") && ![files.entry, files.wasmFile].includes(target)), open.join(", ")).to.deep.equal([]);
      }
    });
  });

  it("configuration: a relayer running as root starts its sandboxes as nobody unless VESTA_SANDBOX_UID/GID say otherwise; never as root", function () {
    const env = { VESTA_MODE: "development", VESTA_RPC_URL: "http://127.0.0.1:8545", VESTA_ACCOUNT_CONFIG_ADDRESS: "0x5FbDB2315678afecb367f032d93F642f64180aa3", VESTA_PAYER_KEYS: `0x${"59".repeat(32)}` };
    expect(loadConfig(env).sandboxUser).to.deep.equal(NOBODY);
    expect(loadConfig({ ...env, VESTA_SANDBOX_UID: "1000" }).sandboxUser).to.deep.equal({ uid: 1000, gid: NOBODY.gid });
    expect(() => loadConfig({ ...env, VESTA_SANDBOX_UID: "0", VESTA_SANDBOX_GID: "0" })).to.throw(/VESTA_SANDBOX_UID must not be 0 \(root\)[\s\S]*VESTA_SANDBOX_GID must not be 0 \(root\)/);
  });

  describe("what a sandbox process can reach, seen from inside", function () {
    let dir: string;
    let dataDir: string;
    let agent: net.Server;
    let agentSocket: string;
    const agentConnections: string[] = [];
    let tcp: http.Server;
    let pool: SandboxPool;

    before(async () => {
      process.env[SECRET_ENV] = "0xsecret";
      dir = fs.mkdtempSync(path.join(os.tmpdir(), "vesta-isolation-"));
      fs.chmodSync(dir, 0o755);
      // The data directory as the relayer leaves it: the root secret (0600), the two databases (SQLite's default 0644), the directory made private.
      dataDir = path.join(dir, "data");
      fs.mkdirSync(dataDir, { mode: 0o755 });
      LocalKeyProvider.open(path.join(dataDir, "root-secret"), pino({ level: "silent" }));
      for (const db of ["billing.sqlite", "actions.sqlite"]) new Database(path.join(dataDir, db)).exec("create table t (x)").close();
      makePrivateDir(dataDir);
      // A stand-in for the guest-agent socket, as /var/run/dstack.sock: in a directory all may search, mode 0755 (others may not write).
      const run = path.join(dir, "run");
      fs.mkdirSync(run, { mode: 0o755 });
      agentSocket = path.join(run, "dstack.sock");
      agent = net.createServer((c) => {
        agentConnections.push("connected");
        c.destroy();
      });
      await new Promise<void>((resolve) => agent.listen(agentSocket, resolve));
      tcp = http.createServer((_req, res) => res.end("reachable"));
      await new Promise<void>((resolve) => tcp.listen(0, "127.0.0.1", resolve));
      pool = new SandboxPool({ size: 1, launcher: processLauncher({ entry: DOUBLE }) });
    });

    after(async () => {
      delete process.env[SECRET_ENV];
      await pool?.close();
      await new Promise((resolve) => agent.close(resolve));
      await new Promise((resolve) => tcp.close(resolve));
      fs.rmSync(dir, { recursive: true, force: true });
    });

    it("has no environment, reads none of the relayer's files, cannot reach the guest agent, start anything, write, load an addon or eval", async function () {
      const files = {
        rootSecret: path.join(dataDir, "root-secret"),
        billing: path.join(dataDir, "billing.sqlite"),
        actions: path.join(dataDir, "actions.sqlite"),
      };
      const r = await pool.run(request("probe", { mode: "probe", files, dataDir, socket: agentSocket, tcpPort: (tcp.address() as net.AddressInfo).port }), noHost);
      expect(r.hasError, r.logs).to.equal(false);
      expect(r.response).to.deep.equal({
        env: [],
        uid: NOBODY.uid,
        gid: NOBODY.gid,
        groups: [NOBODY.gid], // Node lists the effective group; no supplementary group (root's are dropped)
        read: { rootSecret: "ERR_ACCESS_DENIED", billing: "ERR_ACCESS_DENIED", actions: "ERR_ACCESS_DENIED" },
        list: "ERR_ACCESS_DENIED",
        parentEnvironment: "ERR_ACCESS_DENIED",
        write: "ERR_ACCESS_DENIED",
        spawn: "ERR_ACCESS_DENIED",
        worker: "ERR_ACCESS_DENIED",
        addon: "ERR_DLOPEN_DISABLED",
        eval: "EvalError",
        // Node's permission model does not cover unix sockets: the user does (nobody may not write a 0755 socket).
        agentSocket: "EACCES",
        // Not blocked: the sandbox process may open network connections (it holds no credential to use them; see the README's Security model).
        tcp: "connected",
      });
      expect(agentConnections).to.deep.equal([]);
      expect(fs.readdirSync(dataDir).sort()).to.deep.equal(["actions.sqlite", "billing.sqlite", "root-secret"]); // nothing written
    });

    it("the relayer can tell a guest-agent socket that other users may write (it warns at start), from one they may not", async function () {
      expect(socketOpenToOthers(agentSocket)).to.equal(false); // 0755, as above: refused to nobody
      const open = path.join(dir, "run", "open.sock");
      const server = net.createServer((c) => c.destroy());
      await new Promise<void>((resolve) => server.listen(open, resolve));
      try {
        fs.chmodSync(open, 0o777);
        expect(socketOpenToOthers(open)).to.equal(true);
        expect(socketOpenToOthers(path.join(dataDir, "root-secret"))).to.equal(undefined); // not a socket
        expect(socketOpenToOthers(path.join(dir, "missing.sock"))).to.equal(undefined);
      } finally {
        await new Promise((resolve) => server.close(resolve));
      }
    });

    it("past the permission model (a native escape), the user and the file modes still keep the data directory and the root secret", function () {
      // What the OS alone allows nobody, with the same empty environment: this is what holds if Node's checks are bypassed.
      const read = (file: string) =>
        spawnSync(process.execPath, ["-e", `try { require("fs").readFileSync(${JSON.stringify(file)}); console.log("read") } catch (e) { console.log(e.code) }`], { env: {}, uid: NOBODY.uid, gid: NOBODY.gid, encoding: "utf8" }).stdout.trim();
      for (const file of ["root-secret", "billing.sqlite", "actions.sqlite"]) expect(read(path.join(dataDir, file)), file).to.equal("EACCES");
      expect(read(`/proc/${process.pid}/environ`)).to.equal("EACCES");
      // The control: the same databases in a directory left as SQLite and mkdir leave it (0755) are readable by anyone.
      const open = fs.mkdtempSync(path.join(os.tmpdir(), "vesta-open-"));
      try {
        fs.chmodSync(open, 0o755);
        new Database(path.join(open, "billing.sqlite")).exec("create table t (x)").close();
        expect(read(path.join(open, "billing.sqlite"))).to.equal("read");
      } finally {
        fs.rmSync(open, { recursive: true, force: true });
      }
    });
  });

  describe("a sandbox process that dies or misbehaves fails its own run only, and is replaced", function () {
    it("kill -9 of a sandbox process mid-run: that run fails at once with a clear error; the run on the other process and later runs go on", async function () {
      const pool = new SandboxPool({ size: 2 });
      try {
        await Promise.all([pool.run(request("1"), noHost), pool.run(request("2"), noHost)]); // both processes started
        const victim = pool.run(request("async function main() { for (;;) {} }"), noHost);
        await until(() => pool.processes().some((p) => p.busy), "the run to start");
        const other = pool.run(request("async function main() { await new Promise((r) => setTimeout(r, 300)); return 'other' }"), noHost);
        const { pid } = pool.processes().find((p) => p.busy)!;
        const replaced = pool.stats().replaced;
        const killedAt = Date.now();
        process.kill(pid, "SIGKILL");
        const failed = await victim;
        expect(Date.now() - killedAt).to.be.below(2000); // not at its 10 s deadline
        expect(failed).to.deep.include({ response: null, hasError: true });
        expect(failed.error).to.deep.equal({ message: "the sandbox process ended during the run (killed by SIGKILL); the run did not complete" });
        expect((await other).response).to.equal("other");
        expect(pool.stats().replaced).to.equal(replaced + 1);
        expect(pool.processes().map((p) => p.pid)).to.not.include(pid);
        const after = await Promise.all([1, 2, 3].map((n) => pool.run(request(`async function main() { return ${n} }`), noHost)));
        expect(after.map((a) => a.response)).to.deep.equal([1, 2, 3]);
      } finally {
        await pool.close();
      }
    });

    it("an idle sandbox process that is killed is replaced before it is needed", async function () {
      const pool = new SandboxPool({ size: 1 });
      try {
        await pool.run(request("1"), noHost);
        const [{ pid }] = pool.processes();
        process.kill(pid, "SIGKILL");
        await until(() => pool.stats().replaced === 1, "the replacement");
        expect((await pool.run(request("async function main() { return 'fresh' }"), noHost)).response).to.equal("fresh");
        expect(pool.processes().map((p) => p.pid)).to.not.include(pid);
      } finally {
        await pool.close();
      }
    });

    /** A pool of the stand-in sandbox; each case makes it misbehave, then checks that the next process serves. */
    const misbehave = async (mode: string, opts: { heapMb?: number } = {}): Promise<RunResult> => {
      const pool = new SandboxPool({ size: 1, launcher: processLauncher({ entry: DOUBLE, ...opts }) });
      try {
        const result = await pool.run(request("x", { mode }), noHost);
        expect(pool.stats().replaced).to.equal(1);
        expect((await pool.run(request("x", { mode: "echo" }), noHost)).response).to.equal("echo");
        return result;
      } finally {
        await pool.close();
      }
    };

    it("a sandbox that cannot start (its code out of its user's reach) fails the waiting run with Node's error, without a respawn loop", async function () {
      const pool = new SandboxPool({ size: 1, launcher: processLauncher({ entry: "/root/.vesta-no-such-dir/sandbox.js" }) });
      try {
        const r = await pool.run(request("1"), noHost);
        expect(r.error).to.deep.equal({ message: "the sandbox failed to start (Error: Cannot find module '/root/.vesta-no-such-dir/sandbox.js')" });
        expect(pool.stats()).to.include({ started: 1, sandboxes: 0 });
      } finally {
        await pool.close();
      }
    });

    it("a process that exits on its own fails its run with its exit code", async function () {
      expect((await misbehave("exit")).error).to.deep.equal({ message: "the sandbox process ended during the run (exit code 7); the run did not complete" });
    });

    it("a process that announces a frame larger than its run allows is cut off before it is buffered", async function () {
      const rss = process.memoryUsage().rss;
      const r = await misbehave("hugeFrame");
      expect(r.error?.message).to.match(/^the sandbox broke the protocol \(a frame of 4294967280 bytes is larger than allowed \(\d+\)\)$/);
      expect(process.memoryUsage().rss - rss).to.be.below(200 * 1024 * 1024);
    });

    it("a process that sends a frame that is not JSON is cut off", async function () {
      expect((await misbehave("notJson")).error).to.deep.equal({ message: "the sandbox broke the protocol (a frame is not JSON)" });
    });

    it("a process that breaks the protocol (ready twice, a message for another run, a flood of host calls) is cut off; the host sees no more than a run's calls", async function () {
      expect((await misbehave("readyTwice")).error).to.deep.equal({ message: "the sandbox said it was ready twice" });
      expect((await misbehave("otherRun")).error).to.deep.equal({ message: "the sandbox sent a message for a run it does not hold" });
      let calls = 0;
      const counting: Host = async () => {
        calls++;
        throw new Error("refused");
      };
      const pool = new SandboxPool({ size: 1, launcher: processLauncher({ entry: DOUBLE }) });
      try {
        const r = await pool.run(request("x", { mode: "callFlood" }), counting);
        expect(r.error).to.deep.equal({ message: "the sandbox sent more than 256 host calls in one run" });
        expect(calls).to.be.at.most(256);
      } finally {
        await pool.close();
      }
    });

    it("a process that exhausts its V8 heap ends its run with the memory limit", async function () {
      const r = await misbehave("heap", { heapMb: 32 });
      expect(r.error?.limit).to.equal("memoryBytes");
      expect(r.error?.message).to.match(/^memory limit exceeded/);
    });
  });
});

describe("the sandbox bundle a production install runs", function () {
  this.timeout(60_000);
  it("is what npm run build wrote, identical to a bundle of the current sources (no stale or hand-edited bundle)", function () {
    const { bundleSandbox, PREBUILT_BUNDLE } = require("../executor/sandbox/host/sandbox-files") as typeof import("../executor/sandbox/host/sandbox-files");
    expect(fs.existsSync(PREBUILT_BUNDLE), `${PREBUILT_BUNDLE}: npm run build writes it`).to.equal(true);
    expect(Buffer.from(bundleSandbox()).equals(fs.readFileSync(PREBUILT_BUNDLE))).to.equal(true);
  });
});
