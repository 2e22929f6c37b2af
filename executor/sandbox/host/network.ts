/**
 * The network a sandbox process sees (VESTA_SANDBOX_NETWORK). Node 20's permission model has no
 * network control: code that escaped QuickJS could open sockets from the sandbox process, past the
 * egress policy of `fetch` (which the relayer makes): loopback services, cloud metadata, the
 * private network, abstract unix sockets. So:
 *   - "isolated": each sandbox process starts in a network namespace of its own, empty: no
 *     interface but a loopback that is down, so no route to any address (ENETUNREACH), and an
 *     abstract unix socket namespace of its own (ECONNREFUSED). The socket pair on fd 3, made
 *     before, keeps working. util-linux `unshare --net` does it, first in the exec chain:
 *     unshare(CLONE_NEWNET) needs CAP_SYS_ADMIN, so it runs as the relayer's user (root) and then
 *     switches to the slot's user itself (`--setgid`, which also drops the supplementary groups,
 *     then `--setuid`) before it execs the rest: spawn's own uid option would switch before
 *     unshare runs.
 *   - "shared": the relayer's network (where the platform refuses a namespace).
 * `probeNetwork` tries it once (per PATH and user) at start; config.ts decides what a failure means.
 */
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import type { SandboxUser } from "./launchers";

export const SANDBOX_NETWORKS = ["isolated", "shared"] as const;
export type SandboxNetworkMode = (typeof SANDBOX_NETWORKS)[number];

/** How sandboxes are started: in an empty network namespace (with the `unshare` binary that makes it), or on the relayer's network (`unavailable`: why isolation was not had). */
export type SandboxNetwork = { mode: "isolated"; unshare: string } | { mode: "shared"; unavailable?: string };

/** Where `unshare` is looked for when PATH is not set. */
const DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/** The `unshare` binary on `searchPath` (a PATH value), as an absolute path; undefined when there is none. */
export function findUnshare(searchPath: string | undefined): string | undefined {
  for (const dir of (searchPath || DEFAULT_PATH).split(":")) {
    if (!path.isAbsolute(dir)) continue; // a relative PATH entry would depend on the working directory
    const file = path.join(dir, "unshare");
    try {
      fs.accessSync(file, fs.constants.X_OK);
      if (fs.statSync(file).isFile()) return file;
    } catch {
      // not there: the next directory
    }
  }
  return undefined;
}

/**
 * The command that starts `command` on `network`: as is, or through `unshare --net`, which then
 * switches to `user` (when given) before it execs `command`. `user` is what spawn itself must
 * still switch to (undefined when unshare does it).
 */
export function networkCommand(network: SandboxNetwork, user: SandboxUser | undefined, command: { file: string; args: string[] }): { file: string; args: string[]; user?: SandboxUser } {
  if (network.mode === "shared") return { ...command, user };
  const become = user ? ["--setgid", String(user.gid), "--setuid", String(user.uid)] : [];
  return { file: network.unshare, args: ["--net", ...become, "--", command.file, ...command.args] };
}

const probes = new Map<string, SandboxNetwork>();

/**
 * Whether sandboxes can be started in a network namespace of their own here: runs what the
 * launcher will run (`unshare --net`, the switch to `user`, /bin/sh) once per PATH and user; the
 * answer is kept for this process. Never "shared" without the reason.
 */
export function probeNetwork(searchPath: string | undefined, user: SandboxUser | undefined): SandboxNetwork {
  const key = `${searchPath ?? ""}\0${user?.uid}:${user?.gid}`;
  let probed = probes.get(key);
  if (!probed) {
    probed = probeOnce(searchPath, user);
    probes.set(key, probed);
  }
  return probed;
}

function probeOnce(searchPath: string | undefined, user: SandboxUser | undefined): SandboxNetwork {
  const unshare = findUnshare(searchPath);
  if (!unshare) return { mode: "shared", unavailable: `no unshare binary (util-linux) on PATH (${searchPath || DEFAULT_PATH})` };
  const command = networkCommand({ mode: "isolated", unshare }, user, { file: "/bin/sh", args: ["-c", "exit 0"] });
  const r = spawnSync(command.file, command.args, { env: {}, cwd: "/", encoding: "utf8", timeout: 10_000, stdio: ["ignore", "ignore", "pipe"] });
  if (r.status === 0) return { mode: "isolated", unshare };
  const why = r.error?.message ?? (r.stderr.trim().split("\n").pop() || `exit code ${r.status}, signal ${r.signal}`);
  return { mode: "shared", unavailable: `${unshare} --net failed (${why}): the relayer needs CAP_SYS_ADMIN and a seccomp profile that allows unshare` };
}

/**
 * The network sandboxes get, from VESTA_SANDBOX_NETWORK (`requested`): "shared" when asked for;
 * else a namespace of their own when the probe found one can be had; else (unset in development)
 * the relayer's network, with the reason for the warning; else (asked for, or the production
 * default) a problem that stops the start: fail closed.
 */
export function chooseSandboxNetwork(requested: SandboxNetworkMode | undefined, production: boolean, probe: () => SandboxNetwork): { network: SandboxNetwork; problem?: string } {
  if (requested === "shared") return { network: { mode: "shared" } };
  const network = probe();
  if (network.mode === "isolated" || (requested === undefined && !production)) return { network };
  const what = requested ? "VESTA_SANDBOX_NETWORK=isolated" : "VESTA_SANDBOX_NETWORK (isolated, the production default)";
  return {
    network,
    problem: `${what}: sandbox processes cannot get a network namespace of their own: ${network.unavailable}. Set VESTA_SANDBOX_NETWORK=shared to run them on the relayer's network (code that escaped QuickJS could then open sockets past the fetch egress policy)`,
  };
}
