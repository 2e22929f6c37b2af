import { expect } from "chai";
import { spawnSync } from "node:child_process";
import dgram from "node:dgram";
import fs from "node:fs";
import http from "node:http";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import pino from "pino";
import { LocalKeyProvider } from "../executor/keys/local";
import { makePrivateDir, socketOpenToOthers } from "../executor/sandbox/host/isolation";
import { DEFAULT_SANDBOX_MEMORY_MB, FIRST_SANDBOX_USER, processLauncher, slotUser, type SandboxLauncher } from "../executor/sandbox/host/launchers";
import { backoffDelay, DEFAULT_BACKOFF } from "../executor/sandbox/host/respawn-backoff";
import { SandboxPool } from "../executor/sandbox/host/pool";
import { chooseSandboxNetwork, findUnshare, probeNetwork, type SandboxNetwork } from "../executor/sandbox/host/network";
import { sandboxFiles } from "../executor/sandbox/host/sandbox-files";
import { hostFetch } from "../executor/sandbox/host/fetch";
import { DEFAULT_LIMITS, type Host, type RunResult } from "../executor/sandbox/types";
import { loadConfig } from "../relayer/config";
import { call, newAccount, startStack, type Stack } from "./helpers/relayer";
import { sandboxChildren } from "./helpers/sandboxes";
import { until } from "./helpers/until";

/** The stand-ins, copied out of the checkout: it may be closed to the sandbox's user (a private clone), as the service's own files are (sandbox-files.ts). */
const STAND_INS = fs.mkdtempSync(path.join(os.tmpdir(), "vesta-stand-ins-"));
fs.chmodSync(STAND_INS, 0o755);
const standIn = (name: string) => {
  const file = path.join(STAND_INS, name);
  fs.copyFileSync(path.join(__dirname, "fixtures", name), file);
  fs.chmodSync(file, 0o444);
  return file;
};
const DOUBLE = standIn("sandbox-double.js");
const CRASHING = standIn("sandbox-crashing.js");
process.once("exit", () => fs.rmSync(STAND_INS, { recursive: true, force: true }));
const SECRET_ENV = "VESTA_TEST_SECRET_IN_RELAYER_ENV";
const noHost: Host = async () => {
  throw new Error("no host calls expected");
};
const limits = { ...DEFAULT_LIMITS, timeoutMs: 10_000 };
const request = (code: string, params: unknown = {}) => ({ code: Buffer.from(code), ipfsId: "QmIsolation", paramsJson: JSON.stringify(params), limits });


const statusField = (pid: number, name: string) => new RegExp(`^${name}:\\t?(.*)$`, "m").exec(fs.readFileSync(`/proc/${pid}/status`, "utf8"))?.[1].trim().split(/\s+/).filter(Boolean);

/** The network interfaces of `pid`'s network namespace, and whether any is up (its routes, which are none when all are down). */
const interfacesOf = (pid: number) =>
  fs.readFileSync(`/proc/${pid}/net/dev`, "utf8").split("\n").slice(2).map((l) => l.split(":")[0].trim()).filter(Boolean);
const routesOf = (pid: number) => fs.readFileSync(`/proc/${pid}/net/route`, "utf8").split("\n").slice(1).filter(Boolean);

describe("sandbox processes hold no secrets (issue 17.1)", function () {
  this.timeout(120_000);
  before(function () {
    // The tests run as root, as the relayer does in its container: each sandbox then runs as a user of its own.
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
        expect(fs.readlinkSync(`/proc/${pid}/ns/net`), "a network namespace of its own").to.not.equal(fs.readlinkSync("/proc/self/ns/net"));
        expect(interfacesOf(pid)).to.deep.equal(["lo"]); // and in it, only a loopback that is down
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

  const env = { VESTA_MODE: "development", VESTA_RPC_URL: "http://127.0.0.1:8545", VESTA_ACCOUNT_CONFIG_ADDRESS: "0x5FbDB2315678afecb367f032d93F642f64180aa3", VESTA_PAYER_KEYS: `0x${"59".repeat(32)}` };

  it("reads nothing of the checkout: its code, the QuickJS WASM and the guest modules are copies in a directory of its own, open to its user", function () {
    // A checkout in a directory closed to other users (a home of mode 0700, a private clone) must not stop the sandbox's user.
    const files = sandboxFiles();
    const root = fs.realpathSync(path.join(__dirname, ".."));
    const nodeModules = fs.realpathSync(path.join(root, "node_modules"));
    const guestFiles = fs.readdirSync(files.guestDir).map((f) => path.join(files.guestDir, f));
    expect(guestFiles.map((f) => path.basename(f)).sort()).to.deep.equal(fs.readdirSync(path.join(root, "executor", "sandbox", "guest")).filter((f) => f.endsWith(".js")).sort());
    for (const file of [files.entry, files.wasmFile, ...guestFiles]) {
      const real = fs.realpathSync(file);
      expect(real.startsWith(root + path.sep) || real.startsWith(nodeModules + path.sep), `${real} is outside the checkout`).to.equal(false);
      expect(fs.statSync(real).mode & 0o004, `${real} is readable by others`).to.equal(0o004);
      expect(fs.statSync(real).mode & 0o022, `${real} is writable by no other user`).to.equal(0);
      for (let dir = path.dirname(real); dir !== path.dirname(dir); dir = path.dirname(dir)) {
        expect(fs.statSync(dir).mode & 0o001, `${dir} is traversable by others`).to.equal(0o001);
      }
    }
  });

  it("configuration: a relayer running as root starts sandbox i as 64000 + i unless VESTA_SANDBOX_UID/GID say otherwise; never as root, never past the largest id", function () {
    expect(loadConfig(env).sandboxUser).to.deep.equal(FIRST_SANDBOX_USER);
    expect(FIRST_SANDBOX_USER).to.deep.equal({ uid: 64000, gid: 64000 });
    expect(slotUser(FIRST_SANDBOX_USER, 3)).to.deep.equal({ uid: 64003, gid: 64003 });
    expect(loadConfig({ ...env, VESTA_SANDBOX_UID: "1000" }).sandboxUser).to.deep.equal({ uid: 1000, gid: FIRST_SANDBOX_USER.gid });
    expect(() => loadConfig({ ...env, VESTA_SANDBOX_UID: "0", VESTA_SANDBOX_GID: "0" })).to.throw(/VESTA_SANDBOX_UID must not be 0 \(root\)[\s\S]*VESTA_SANDBOX_GID must not be 0 \(root\)/);
    expect(() => loadConfig({ ...env, VESTA_SANDBOX_WORKERS: "4", VESTA_SANDBOX_UID: "4294967292" })).to.throw("VESTA_SANDBOX_UID: 4294967292 + 4 sandbox processes passes the largest id (4294967294)");
    expect(loadConfig({ ...env, VESTA_SANDBOX_WORKERS: "3", VESTA_SANDBOX_UID: "4294967292" }).sandboxUser?.uid).to.equal(4294967292);
  });

  it("configuration: each sandbox process gets an OS memory ceiling, 2048 MB unless VESTA_SANDBOX_MEMORY_MB says otherwise, never below what a run needs", function () {
    expect(loadConfig(env).sandboxMemoryMb).to.equal(DEFAULT_SANDBOX_MEMORY_MB).and.to.equal(2048);
    expect(loadConfig({ ...env, VESTA_SANDBOX_MEMORY_MB: "1024" }).sandboxMemoryMb).to.equal(1024);
    expect(loadConfig({ ...env, VESTA_ACTION_MEMORY_MB: "1024" }).sandboxMemoryMb, "the default makes room for a larger run").to.equal(2560);
    expect(() => loadConfig({ ...env, VESTA_SANDBOX_MEMORY_MB: "600" })).to.throw("VESTA_SANDBOX_MEMORY_MB must be at least 640 (twice VESTA_ACTION_MEMORY_MB, plus 512 MB for the V8 heap and Node)");
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
        uid: FIRST_SANDBOX_USER.uid, // slot 0 of its pool
        gid: FIRST_SANDBOX_USER.gid,
        groups: [FIRST_SANDBOX_USER.gid], // Node lists the effective group; no supplementary group (root's are dropped)
        read: { rootSecret: "ERR_ACCESS_DENIED", billing: "ERR_ACCESS_DENIED", actions: "ERR_ACCESS_DENIED" },
        list: "ERR_ACCESS_DENIED",
        parentEnvironment: "ERR_ACCESS_DENIED",
        write: "ERR_ACCESS_DENIED",
        spawn: "ERR_ACCESS_DENIED",
        worker: "ERR_ACCESS_DENIED",
        addon: "ERR_DLOPEN_DISABLED",
        eval: "EvalError",
        // Node's permission model does not cover unix sockets: the user does (another user may not write a 0755 socket).
        agentSocket: "EACCES",
        // Its network namespace is its own and empty (network.ts): no route, not even to loopback.
        tcp: "ENETUNREACH",
      });
      expect(agentConnections).to.deep.equal([]);
      expect(fs.readdirSync(dataDir).sort()).to.deep.equal(["actions.sqlite", "billing.sqlite", "root-secret"]); // nothing written
    });

    it("the relayer can tell a guest-agent socket that other users may write (it warns at start), from one they may not", async function () {
      expect(socketOpenToOthers(agentSocket)).to.equal(false); // 0755, as above: refused to the sandbox's user
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
      // What the OS alone allows a sandbox's user, with the same empty environment: this is what holds if Node's checks are bypassed.
      const read = (file: string) =>
        spawnSync(process.execPath, ["-e", `try { require("fs").readFileSync(${JSON.stringify(file)}); console.log("read") } catch (e) { console.log(e.code) }`], { env: {}, ...FIRST_SANDBOX_USER, encoding: "utf8" }).stdout.trim();
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

  describe("a network namespace of its own: code that escaped QuickJS opens no socket (VESTA_SANDBOX_NETWORK)", function () {
    const ABSTRACT = `vesta-netns-test-${process.pid}`;
    let tcp: net.Server;
    let abstract: net.Server;
    let web: http.Server;
    let udp: dgram.Socket;
    const seen: string[] = [];
    const udpTarget = () => `127.0.0.1:${udp.address().port}`;
    const tcpTarget = () => `127.0.0.1:${(tcp.address() as net.AddressInfo).port}`;
    /** Runs the stand-in's "network" probe in a pool on `network`; returns what it reached, its pid's namespace and user. */
    const probeOn = async (network: SandboxNetwork) => {
      const pool = new SandboxPool({ size: 1, launcher: processLauncher({ entry: DOUBLE, network }) });
      try {
        const isolated = network.mode === "isolated"; // the addresses past the test's own servers only where they fail fast
        const tcpTargets = [tcpTarget(), ...(isolated ? [`::1:${(tcp.address() as net.AddressInfo).port}`, "169.254.169.254:80", "10.0.0.1:5432"] : [])];
        const r = await pool.run(request("x", { mode: "network", tcp: tcpTargets, udp: [udpTarget()], abstract: [ABSTRACT] }), noHost);
        expect(r.hasError, r.logs).to.equal(false);
        const [{ pid }] = pool.processes();
        return { reached: r.response, pid, netns: fs.readlinkSync(`/proc/${pid}/ns/net`), uid: statusField(pid, "Uid"), routes: routesOf(pid), dataLimit: /^Max data size\s+(\S+)/m.exec(fs.readFileSync(`/proc/${pid}/limits`, "utf8"))?.[1] };
      } finally {
        await pool.close();
      }
    };

    before(async () => {
      tcp = net.createServer((c) => {
        seen.push("tcp");
        c.destroy();
      });
      abstract = net.createServer((c) => {
        seen.push("abstract");
        c.destroy();
      });
      web = http.createServer((_req, res) => res.end("fetched by the relayer"));
      udp = dgram.createSocket("udp4").on("message", () => seen.push("udp"));
      await Promise.all([
        new Promise<void>((resolve) => udp.bind(0, "127.0.0.1", resolve)),
        new Promise<void>((resolve) => tcp.listen(0, "127.0.0.1", resolve)),
        new Promise<void>((resolve) => abstract.listen(`\0${ABSTRACT}`, resolve)),
        new Promise<void>((resolve) => web.listen(0, "127.0.0.1", resolve)),
      ]);
    });
    after(async () => {
      await Promise.all([tcp, abstract, web].map((s) => new Promise((resolve) => s.close(resolve))));
      udp.close();
    });
    beforeEach(() => void seen.splice(0));

    it("isolated (the default here): a loopback TCP server (IPv4 and IPv6), a loopback UDP socket, cloud metadata, the private network and an abstract unix socket of the host are out of reach; the process keeps its slot user and memory ceiling", async function () {
      const network = probeNetwork(process.env.PATH, FIRST_SANDBOX_USER);
      expect(network.mode, JSON.stringify(network)).to.equal("isolated");
      const seenFrom = await probeOn(network);
      expect(seenFrom.reached).to.deep.equal({
        tcp: { [tcpTarget()]: "ENETUNREACH", [`::1:${(tcp.address() as net.AddressInfo).port}`]: "EADDRNOTAVAIL" /* no IPv6 address at all */, "169.254.169.254:80": "ENETUNREACH", "10.0.0.1:5432": "ENETUNREACH" },
        udp: { [udpTarget()]: "ENETUNREACH" },
        abstract: { [ABSTRACT]: "ECONNREFUSED" }, // its own abstract namespace, where no one listens
      });
      expect(seen, "connections the host's servers accepted").to.deep.equal([]);
      expect(seenFrom.netns).to.not.equal(fs.readlinkSync("/proc/self/ns/net"));
      expect(seenFrom.routes).to.deep.equal([]);
      expect(seenFrom.uid, "unshare switched to the slot's user after it made the namespace").to.deep.equal(Array(4).fill(String(FIRST_SANDBOX_USER.uid)));
      expect(seenFrom.dataLimit).to.equal(String(DEFAULT_SANDBOX_MEMORY_MB * 1024 * 1024));
    });

    it("shared (the control: the same probe would see the host's network): it reaches all three, as the same user", async function () {
      const seenFrom = await probeOn({ mode: "shared" });
      expect(seenFrom.reached).to.deep.equal({ tcp: { [tcpTarget()]: "connected" }, udp: { [udpTarget()]: "sent" }, abstract: { [ABSTRACT]: "connected" } });
      await until(() => seen.length === 3, "the host's servers to see all three");
      expect(seen.sort()).to.deep.equal(["abstract", "tcp", "udp"]);
      expect(seenFrom.netns).to.equal(fs.readlinkSync("/proc/self/ns/net"));
      expect(seenFrom.uid).to.deep.equal(Array(4).fill(String(FIRST_SANDBOX_USER.uid)));
    });

    it("isolated: actions still run, and their fetch still goes out, through the relayer's egress", async function () {
      const pool = new SandboxPool({ size: 1 });
      const calls: string[] = [];
      const host: Host = async (call) => {
        calls.push(call.op);
        if (call.op !== "fetch") throw new Error(`unexpected ${call.op}`);
        return hostFetch(call, limits, { allowPrivateNetworks: true }); // the test's server is on loopback
      };
      try {
        const url = `http://127.0.0.1:${(web.address() as net.AddressInfo).port}/`;
        const r = await pool.run(request(`async function main({ url }) { const res = await fetch(url); return [res.status, await res.text()] }`, { url }), host);
        expect(r.hasError, r.logs).to.equal(false);
        expect(r.response).to.deep.equal([200, "fetched by the relayer"]);
        expect(calls).to.deep.equal(["fetch"]);
        expect((await pool.run(request("async function main() { return 'hello' }"), noHost)).response).to.equal("hello");
        const [{ pid }] = pool.processes();
        expect(fs.readlinkSync(`/proc/${pid}/ns/net`)).to.not.equal(fs.readlinkSync("/proc/self/ns/net"));
      } finally {
        await pool.close();
      }
    });

    it("the probe: unshare missing or refused gives the relayer's network with the reason, never isolated", function () {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "vesta-unshare-"));
      try {
        expect(probeNetwork(dir, FIRST_SANDBOX_USER)).to.deep.equal({ mode: "shared", unavailable: `no unshare binary (util-linux) on PATH (${dir})` });
        // What a container without CAP_SYS_ADMIN (or under Docker's default seccomp profile) answers.
        fs.writeFileSync(path.join(dir, "unshare"), "#!/bin/sh\necho 'unshare: unshare failed: Operation not permitted' >&2\nexit 1\n", { mode: 0o755 });
        expect(probeNetwork(`${dir}:/usr/bin:/bin`, FIRST_SANDBOX_USER)).to.deep.equal({
          mode: "shared",
          unavailable: `${dir}/unshare --net failed (unshare: unshare failed: Operation not permitted): the relayer needs CAP_SYS_ADMIN and a seccomp profile that allows unshare`,
        });
      } finally {
        fs.rmSync(dir, { recursive: true, force: true });
      }
    });

    it("isolated, and unshare refuses at a sandbox's start (after a good probe): that sandbox fails to start, the waiting run fails with the reason; never started on the relayer's network", async function () {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "vesta-unshare-"));
      fs.chmodSync(dir, 0o755);
      const refusing = path.join(dir, "unshare");
      fs.writeFileSync(refusing, "#!/bin/sh\necho 'unshare: unshare failed: No space left on device' >&2\nexit 1\n", { mode: 0o755 });
      const pool = new SandboxPool({ size: 1, launcher: processLauncher({ entry: DOUBLE, network: { mode: "isolated", unshare: refusing } }) });
      try {
        const r = await pool.run(request("x", { mode: "network", tcp: [tcpTarget()], udp: [], abstract: [ABSTRACT] }), noHost);
        expect(r.error).to.deep.equal({ message: "the sandbox failed to start (unshare: unshare failed: No space left on device)" });
        expect(r.response).to.equal(null);
        expect(seen).to.deep.equal([]);
        expect(pool.stats()).to.include({ started: 1, sandboxes: 0 });
      } finally {
        await pool.close();
        fs.rmSync(dir, { recursive: true, force: true });
      }
    });

    it("configuration: isolated by default when it can be had; development falls back to shared (with the reason), production and an explicit isolated refuse to start; shared only when asked", function () {
      const none = `/nonexistent-${process.pid}`; // a PATH without unshare
      expect(loadConfig(env).sandboxNetwork).to.deep.equal({ mode: "isolated", unshare: findUnshare(undefined) }); // env has no PATH: the standard directories
      expect(loadConfig({ ...env, VESTA_SANDBOX_NETWORK: "shared" }).sandboxNetwork).to.deep.equal({ mode: "shared" });
      expect(loadConfig({ ...env, PATH: none }).sandboxNetwork).to.deep.equal({ mode: "shared", unavailable: `no unshare binary (util-linux) on PATH (${none})` });
      const refused = `sandbox processes cannot get a network namespace of their own: no unshare binary (util-linux) on PATH (${none}). Set VESTA_SANDBOX_NETWORK=shared to run them on the relayer's network`;
      expect(() => loadConfig({ ...env, PATH: none, VESTA_SANDBOX_NETWORK: "isolated" })).to.throw(`VESTA_SANDBOX_NETWORK=isolated: ${refused}`);
      expect(() => loadConfig({ ...env, VESTA_SANDBOX_NETWORK: "none" })).to.throw("VESTA_SANDBOX_NETWORK must be isolated or shared");
      // Production: the same failure stops the start (among production's other refusals of this development environment), unless shared is asked for.
      const production = { ...env, VESTA_MODE: "production", PATH: none };
      expect(() => loadConfig(production)).to.throw(`VESTA_SANDBOX_NETWORK (isolated, the production default): ${refused}`);
      try {
        loadConfig({ ...production, VESTA_SANDBOX_NETWORK: "shared" });
        expect.fail("production refuses this environment (no guest agent, no Stripe keys)");
      } catch (err) {
        expect((err as Error).message).to.include("STRIPE_SECRET_KEY: required with VESTA_MODE=production").and.not.include("VESTA_SANDBOX_NETWORK");
      }
      // The decision alone: shared is never chosen in production without being asked for; the probe is not run for shared.
      const refusedProbe = (): SandboxNetwork => ({ mode: "shared", unavailable: "refused" });
      expect(chooseSandboxNetwork(undefined, true, refusedProbe).problem).to.match(/^VESTA_SANDBOX_NETWORK \(isolated, the production default\): /);
      expect(chooseSandboxNetwork(undefined, false, refusedProbe)).to.deep.equal({ network: { mode: "shared", unavailable: "refused" } });
      expect(chooseSandboxNetwork("shared", true, () => expect.fail("probed"))).to.deep.equal({ network: { mode: "shared" } });
    });
  });

  describe("no two live sandboxes share a user (finding 2)", function () {
    /** Whether a process running as `user` may send signal 0 to `pid` (what any signal, and ptrace, needs first). */
    const maySignal = (user: { uid: number; gid: number }, pid: number) =>
      spawnSync(process.execPath, ["-e", `try { process.kill(${pid}, 0); console.log("allowed") } catch (e) { console.log(e.code) }`], { env: {}, ...user, encoding: "utf8" }).stdout.trim();
    const userOf = (pid: number) => ({ uid: Number(statusField(pid, "Uid")![0]), gid: Number(statusField(pid, "Gid")![0]) });

    it("two concurrent sandboxes run as two users (base + slot), and the one cannot signal the other", async function () {
      const pool = new SandboxPool({ size: 2 });
      try {
        const sleep = request("async function main() { await new Promise((r) => setTimeout(r, 1500)); return 'slept' }");
        const runs = [pool.run(sleep, noHost), pool.run(sleep, noHost)];
        await until(() => pool.processes().filter((p) => p.busy).length === 2, "both runs to start");
        const [a, b] = pool.processes().map((p) => p.pid);
        for (const pid of [a, b]) {
          expect(statusField(pid, "Uid")!.every((id) => id === statusField(pid, "Uid")![0]), "real, effective, saved, fs uid").to.equal(true);
        }
        expect([userOf(a), userOf(b)]).to.have.deep.members([slotUser(FIRST_SANDBOX_USER, 0), slotUser(FIRST_SANDBOX_USER, 1)]);
        expect(maySignal(userOf(a), b), "a sandbox's user signalling another sandbox").to.equal("EPERM");
        expect(maySignal(userOf(b), a)).to.equal("EPERM");
        expect(maySignal(userOf(a), a), "the control: its own process").to.equal("allowed");
        expect((await Promise.all(runs)).map((r) => r.response)).to.deep.equal(["slept", "slept"]);
      } finally {
        await pool.close();
      }
    });

    it("a slot (its user) goes to a new sandbox only once the process that held it is gone, also when the pool kills it and starts another meanwhile", async function () {
      const real = processLauncher();
      const live = new Map<number, number>(); // slot -> pid
      const clashes: string[] = [];
      let spawned = 0;
      const launcher: SandboxLauncher = (config, frameBytes, events) => {
        if (live.has(config.slot)) clashes.push(`slot ${config.slot} given again while pid ${live.get(config.slot)} lives`);
        const sandbox = real(config, frameBytes, {
          ...events,
          exit: (exit) => {
            live.delete(config.slot);
            events.exit(exit);
          },
        });
        live.set(config.slot, sandbox.pid!);
        spawned++;
        return sandbox;
      };
      const pool = new SandboxPool({ size: 2, launcher, graceMs: 100 });
      try {
        // A built-in that never checks the interrupt handler: the pool kills each sandbox at its deadline (SIGKILL, then its exit) and starts another for the next run.
        const spin = { ...request("async function main() { Array.prototype.indexOf.call({ length: 2 ** 32 - 1 }, 1) }"), limits: { ...limits, timeoutMs: 200 } };
        const results = await Promise.all(Array.from({ length: 6 }, () => pool.run(spin, noHost)));
        expect(results.map((r) => r.error?.limit)).to.deep.equal(Array(6).fill("timeoutMs"));
        expect(spawned).to.be.at.least(6);
        expect(clashes).to.deep.equal([]);
        const uids = pool.processes().map((p) => userOf(p.pid).uid);
        expect(new Set(uids).size).to.equal(uids.length);
        expect((await pool.run(request("async function main() { return 'after' }"), noHost)).response).to.equal("after");
      } finally {
        await pool.close();
      }
    });
  });

  describe("an OS memory ceiling on each sandbox process (finding 1b)", function () {
    it("a run whose memory limit lets it ask for 800 MB fails with the memory limit under a 600 MB ceiling; the next run on the same pool succeeds", async function () {
      const pool = new SandboxPool({ size: 1, launcher: processLauncher({ memoryMb: 600 }) });
      const big = { ...limits, memoryBytes: 1000 * 1024 * 1024 };
      try {
        const r = await pool.run({ ...request("async function main() { const kept = []; for (let i = 0; i < 8; i++) kept.push(new Uint8Array(100e6)); return kept.length }"), limits: big }, noHost);
        expect(r.response, "the allocation did not succeed").to.equal(null);
        expect(r.error?.limit).to.equal("memoryBytes");
        expect(r.error?.message).to.equal("memory limit exceeded: the action may use at most 1000 MB (memoryBytes)");
        expect((await pool.run(request("async function main() { return 'next' }"), noHost)).response).to.equal("next");
      } finally {
        await pool.close();
      }
    });

    it("the ceiling is RLIMIT_DATA, soft and hard, on the relayer's real sandbox processes", async function () {
      const pool = new SandboxPool({ size: 1 });
      try {
        await pool.run(request("1"), noHost);
        const [{ pid }] = pool.processes();
        const line = /^Max data size\s+(\S+)\s+(\S+)\s+bytes/m.exec(fs.readFileSync(`/proc/${pid}/limits`, "utf8"));
        expect(line?.slice(1, 3)).to.deep.equal(Array(2).fill(String(DEFAULT_SANDBOX_MEMORY_MB * 1024 * 1024)));
      } finally {
        await pool.close();
      }
    });
  });

  describe("sandboxes that keep dying are started again after a growing delay (finding 3)", function () {
    it("a sandbox that dies right after it starts is started a handful of times in 3 s, not in a loop, and the pool says so", async function () {
      const lines: { msg?: string; crashes?: number; delayMs?: number }[] = [];
      const logger = pino({ level: "warn" }, { write: (line: string) => void lines.push(JSON.parse(line)) });
      const pool = new SandboxPool({ size: 1, logger, launcher: processLauncher({ entry: CRASHING }) });
      try {
        // The run is handed to the first sandbox, which dies under it; then the pool keeps one started ahead of need, and each dies.
        expect((await pool.run(request("1"), noHost)).error?.message).to.equal("the sandbox process ended during the run (exit code 3); the run did not complete");
        await new Promise((r) => setTimeout(r, 3000));
        const { started } = pool.stats();
        // Delays 0, 200, 400, 800, 1600 ms: 5 or 6 starts in 3 s (each start takes ~100 ms more). In a loop: 20 to 40.
        expect(started, `${started} sandboxes started in 3 s`).to.be.within(4, 7);
        const backoff = lines.filter((l) => l.delayMs !== undefined);
        expect(backoff.length).to.be.within(3, 5);
        expect(backoff.map((l) => l.delayMs)).to.deep.equal([200, 400, 800, 1600, 3200].slice(0, backoff.length));
        expect(backoff[0].msg).to.equal("sandbox: 2 sandboxes ended in a row without a run completing; the next one starts in 200 ms");
      } finally {
        await pool.close();
      }
    });

    it("the delay doubles from 200 ms up to 5 s; the first replacement is immediate", function () {
      expect(Array.from({ length: 10 }, (_, i) => backoffDelay(i + 1, DEFAULT_BACKOFF))).to.deep.equal([0, 200, 400, 800, 1600, 3200, 5000, 5000, 5000, 5000]);
      expect(backoffDelay(1000, DEFAULT_BACKOFF)).to.equal(5000);
    });

    it("a run that completes starts the count over: a sandbox killed after it is replaced at once", async function () {
      // Delays far longer than a process start, even on a loaded machine: the two cases cannot be confused.
      const pool = new SandboxPool({ size: 1, launcher: processLauncher({ entry: DOUBLE }), respawnBackoff: { baseMs: 1500, maxMs: 3000 } });
      try {
        for (let i = 0; i < 3; i++) expect((await pool.run(request("x", { mode: "exit" }), noHost)).error?.message).to.match(/exit code 7/);
        const t = Date.now();
        expect((await pool.run(request("x", { mode: "echo" }), noHost)).response).to.equal("echo");
        expect(Date.now() - t, "waited for the backoff of 3 deaths (3 s)").to.be.at.least(2900);
        await pool.run(request("x", { mode: "exit" }), noHost);
        const u = Date.now();
        expect((await pool.run(request("x", { mode: "echo" }), noHost)).response).to.equal("echo");
        expect(Date.now() - u, "one death after a completed run: no delay (a process start only)").to.be.below(2500);
      } finally {
        await pool.close();
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

    it("an allocation outside QuickJS and the V8 heap (4 GiB of buffers) stops at the default OS memory ceiling (finding 1b): that run fails with the memory limit, the sandbox is replaced", async function () {
      const r = await misbehave("offHeap");
      expect(r.response).to.equal(null);
      expect(r.error?.limit).to.equal("memoryBytes");
      expect(r.error?.message).to.match(/^memory limit exceeded/);
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
