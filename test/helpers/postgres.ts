import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

export type TempPostgres = { url: string; stop: () => void };

/**
 * A PostgreSQL for tests: TRIGGERS_TEST_DATABASE_URL if set, else a throwaway cluster started with the local
 * `initdb`/`pg_ctl` (as the `postgres` user when running as root). Undefined when neither is available.
 */
export function tempPostgres(): TempPostgres | undefined {
  if (process.env.TRIGGERS_TEST_DATABASE_URL) return { url: process.env.TRIGGERS_TEST_DATABASE_URL, stop: () => {} };
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "vesta-pg-"));
  const port = 30_000 + Math.floor(Math.random() * 20_000);
  const asRoot = process.getuid?.() === 0;
  const run = (cmd: string, args: string[]) =>
    execFileSync(asRoot ? "runuser" : cmd, asRoot ? ["-u", "postgres", "--", cmd, ...args] : args, { stdio: "pipe", timeout: 60_000 });
  try {
    if (asRoot) execFileSync("chown", ["postgres", dir]);
    run("initdb", ["-D", path.join(dir, "data"), "-A", "trust", "-U", "postgres", "--no-sync"]);
    run("pg_ctl", ["-D", path.join(dir, "data"), "-o", `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off`, "-w", "-l", path.join(dir, "log"), "start"]);
  } catch {
    fs.rmSync(dir, { recursive: true, force: true });
    return undefined;
  }
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    stop: () => {
      try {
        run("pg_ctl", ["-D", path.join(dir, "data"), "-m", "immediate", "-w", "stop"]);
      } finally {
        fs.rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}
