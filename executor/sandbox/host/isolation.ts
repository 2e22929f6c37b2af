/**
 * What the relayer does to its own files so that a sandbox process running as another user cannot
 * open them even past Node's permission model (a native escape): the data directory (databases,
 * by default the root secret) is made private to the relayer's user; the guest-agent socket is
 * checked, since any user that may write a unix socket may connect to it.
 */
import fs from "node:fs";
import type { Logger } from "pino";

/** Creates `dir` if needed and makes it 0700 when this user owns it; says what it could not do. */
export function makePrivateDir(dir: string, logger?: Logger): void {
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const stat = fs.statSync(dir);
  if ((stat.mode & 0o077) === 0) return;
  if (stat.uid === process.getuid?.()) {
    fs.chmodSync(dir, 0o700);
    logger?.info({ dir, mode: (stat.mode & 0o777).toString(8) }, "made the data directory private to the relayer's user (0700): sandbox processes run as another user");
  } else {
    logger?.warn({ dir, owner: stat.uid }, "the data directory is open to other users and not ours to change: a sandbox process may read it past the permission model");
  }
}

/** Whether users other than the owner may connect to the unix socket at `file` (undefined: not a socket here). */
export function socketOpenToOthers(file: string): boolean | undefined {
  try {
    const stat = fs.statSync(file);
    return stat.isSocket() ? (stat.mode & 0o002) !== 0 : undefined;
  } catch {
    return undefined;
  }
}
